/**
 * Constraint 7: the rollout starts in shadow mode (evaluate and measure, never reject), and
 * every rule has its own kill switch.
 */
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, objects, ruleIdOf, rulesOf, show } from './guards.js';

export default defineConstraint({
  meta: {
    id: 'shadow-rollout',
    number: 7,
    title: 'Rollout starts in shadow mode, with a kill switch per rule',
    description:
      'The rollout plan begins with a shadow-mode step of at least one day, and every rule has a feature-flag kill switch listed in the rollout.',
    messages: {
      notShadowFirst: 'The rollout does not start in shadow mode.',
      noShadowPeriod: 'The rollout starts in shadow mode but gives it no time (shadowDays must be at least 1).',
      noSteps: 'The rollout plan has no steps.',
      firstStepNotShadow: 'The first rollout step is "{{step}}", not shadow mode.',
      missingKillSwitch: 'The rule has no kill switch; a mis-tuned limit could not be turned off without a deploy.',
      killSwitchNotInRollout: 'The kill switch of the rule is not listed in the rollout plan.',
      killSwitchMismatch: 'The rule names kill switch {{ruleFlag}} but the rollout plan lists {{rolloutFlag}}.',
    },
  },
  check(design, report) {
    const rollout = design?.rollout;
    if (rollout?.startsInShadow !== true) {
      report({ messageId: 'notShadowFirst' });
    } else if (!isPositiveNumber(rollout.shadowDays)) {
      report({ messageId: 'noShadowPeriod' });
    }

    const steps = objects(rollout?.steps);
    const first = steps.reduce<(typeof steps)[number] | undefined>(
      (min, step) => (min === undefined || step.order < min.order ? step : min),
      undefined,
    );
    if (first === undefined) {
      report({ messageId: 'noSteps' });
    } else if (typeof first.title !== 'string' || !/shadow/i.test(first.title)) {
      report({ messageId: 'firstStepNotShadow', data: { step: show(first.title ?? 'untitled') } });
    }

    const switches = objects(rollout?.killSwitches);
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      const ruleFlag = rule.killSwitch?.flag;
      if (!isNonEmptyString(ruleFlag)) {
        report({ messageId: 'missingKillSwitch', ruleId });
        continue;
      }
      const listed = switches.find((s) => ruleId !== undefined && s.ruleId === ruleId);
      if (listed === undefined) {
        report({ messageId: 'killSwitchNotInRollout', ruleId });
      } else if (listed.flag !== ruleFlag) {
        report({ messageId: 'killSwitchMismatch', ruleId, data: { ruleFlag, rolloutFlag: show(listed.flag ?? 'none') } });
      }
    }
  },
});
