/**
 * Constraint 7: the rollout starts in shadow mode (evaluate and measure, never reject), and
 * every rule has its own kill switch.
 */
import { defineConstraint } from './define.js';
import { isNonEmptyString, isPositiveNumber, objects, ruleIdOf, rulesOf, show } from './guards.js';
import { DESIGN_DATA_FILE, fileOf, PROVIDERS_FILE, shippedDesign, shippedProviders } from './artefacts.js';

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
      notShadowInFile: '{{file}} starts the rules in {{mode}} mode, but the rollout starts in shadow.',
      killSwitchNotShipped: "The rule's kill switch {{flag}} is not in {{file}}: nothing turns the rule off the way the rollout plan says.",
      edgeKillSwitchNotShipped:
        'The gateway configuration ({{file}}) does not say how to switch the edge rule off, as the rollout plan does: {{how}}.',
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
  checkFiles(design, files, report) {
    const data = shippedDesign(files);
    const shadow = design.rollout?.startsInShadow === true;
    if (shadow && data && data.defaultMode !== 'shadow') {
      report({ messageId: 'notShadowInFile', data: { file: DESIGN_DATA_FILE, mode: show(data.defaultMode) } });
    }
    const nginxServer = fileOf(files, 'gateway/nginx-server.conf');
    if (shadow && nginxServer && !/^\s*limit_req_dry_run\s+on;/m.test(nginxServer.content)) {
      report({ messageId: 'notShadowInFile', data: { file: nginxServer.path, mode: 'enforce' } });
    }
    const providers = shippedProviders(files);
    const gateway = files.filter((f) => f.path.startsWith('gateway/'));
    for (const rule of rulesOf(design)) {
      const ruleId = ruleIdOf(rule);
      const flag = rule.killSwitch?.flag;
      if (ruleId === undefined || !isNonEmptyString(flag)) continue;
      if (rule.tier === 'outbound' || rule.layer === 'outbound-client') {
        const p = providers.find((x) => x.ruleId === ruleId);
        if (p && p.killSwitchFlag !== flag) report({ messageId: 'killSwitchNotShipped', ruleId, data: { flag, file: PROVIDERS_FILE } });
      } else if (rule.layer === 'edge') {
        // An edge rule has no runtime flag: its switch is a change of the gateway file, which must say which.
        if (design.scope?.gateway === 'none' || gateway.length === 0) continue;
        const how = objects(design.rollout?.killSwitches).find((k) => k.ruleId === ruleId)?.how;
        if (!isNonEmptyString(how)) continue; // not listed in the rollout: reported by check()
        // one line of a gateway file names the rule and says how (the files write one line per rule)
        const words = (text: string): string => text.replace(/\s+/g, ' ');
        const namesRule = new RegExp(`(^|[^\\w-])${ruleId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^\\w-]|$)`);
        if (!gateway.some((f) => f.content.split('\n').some((line) => namesRule.test(line) && words(line).includes(words(how)))))
          report({ messageId: 'edgeKillSwitchNotShipped', ruleId, data: { how, file: gateway.map((f) => f.path).join(', ') } });
      } else {
        const shipped = data?.rules.find((r) => r.id === ruleId);
        if (shipped && shipped.flag !== flag) report({ messageId: 'killSwitchNotShipped', ruleId, data: { flag, file: DESIGN_DATA_FILE } });
      }
    }
  },
});
