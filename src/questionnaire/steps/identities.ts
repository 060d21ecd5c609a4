/**
 * Design question 3: what requests can be keyed on. Not critical: "don't know" leaves it
 * out of the answers and the design states its assumption. Known identities (previous
 * answers, or found in the project) are confirmed, or come pre-picked.
 */
import type { IDENTITIES } from '../../answers/schema.js';
import { describeKnown, DONT_KNOW_NAME, keepOrder, UNKNOWN, type Step, type Unknown } from '../context.js';
import type { PromptChoice } from '../prompt.js';

type Identity = (typeof IDENTITIES)[number];

const CHOICES: PromptChoice<Identity | Unknown>[] = [
  { value: 'api-key', name: 'API key', description: 'Server-to-server clients send a key with every call.' },
  { value: 'user', name: 'User id', description: 'From a session cookie or a bearer token.' },
  { value: 'tenant', name: 'Tenant / organisation id', description: 'B2B accounts with several users each.' },
  { value: 'ip', name: 'Client IP', description: 'For anonymous calls; many people can share one address behind NAT or CGNAT.' },
  { value: 'session', name: 'Session id', description: 'Browser sessions before or without sign-in.' },
  { value: UNKNOWN, name: DONT_KNOW_NAME },
];

export function validateIdentities(chosen: readonly (Identity | Unknown)[]): true | string {
  if (chosen.length === 0) return `Pick at least one with space, or pick "${DONT_KNOW_NAME}".`;
  if (chosen.includes(UNKNOWN) && chosen.length > 1)
    return `"${DONT_KNOW_NAME}" cannot be combined with other choices: unpick one of them.`;
  return true;
}

export const identities: Step = {
  id: 'identities',
  item: 3,
  fields: ['identities'],
  async run(ctx) {
    const flag = ctx.flags.identities;
    if (flag === UNKNOWN) return {};
    if (flag !== undefined) return { identities: flag };
    const detected = ctx.known.answers.identities;
    if (!ctx.interactive) return detected ? { identities: detected } : {};
    if (detected && detected.length > 0) {
      const keep = await ctx.prompt.confirm({
        message: `Keep the identities found: ${describeKnown(ctx.known, [{ field: 'identities', label: '', value: detected }])}? (No to choose them yourself)`,
        default: true,
      });
      if (keep) return { identities: detected };
    }
    const chosen = await ctx.prompt.checkbox<Identity | Unknown>({
      message: 'What can requests be keyed on? (space to pick, enter when done)',
      choices: CHOICES.map((c) => (detected?.includes(c.value as Identity) ? { ...c, checked: true } : c)),
      validate: validateIdentities,
    });
    return chosen.includes(UNKNOWN) ? {} : { identities: keepOrder(chosen as Identity[], detected) };
  },
};
