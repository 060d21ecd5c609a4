/**
 * The `rl-design init` flags as commander options, one per interview question, in interview
 * order. Kept apart from flags.ts (which parses them with the answers' schema) so the CLI
 * can list them without loading the schema.
 */
import { BURSTINESS, EXHAUSTION, FRAMEWORKS, GATEWAYS, GOALS, IDENTITIES, STORES } from '../answers/choices.js';
import { ENDPOINT_SPEC_HELP, FAIL_MODE_HELP, OUTBOUND_SPEC_HELP, PLAN_SPEC_HELP } from './spec-help.js';

export const QUOTA_RESETS = ['calendar-month', 'calendar-day', 'rolling'] as const;

/** Commander option definitions, in interview order, for `rl-design init`. */
export const INIT_OPTIONS: readonly { flags: string; description: string; repeatable?: boolean }[] = [
  {
    flags: '-y, --yes',
    description: 'ask nothing: use flags, then the previous answers, detected facts and defaults (also the behaviour without a TTY)',
  },
  {
    flags: '--answers-file <file>',
    description:
      'the answers file (default: rate-limit.answers.json); when it exists, its answers are the defaults, and it is rewritten only if one changed',
  },
  {
    flags: '--force',
    description:
      'replace an answers file that is not valid, starting from scratch (and documents edited since rl-design wrote them) instead of stopping',
  },
  { flags: '--date <YYYY-MM-DD>', description: 'generation date shown in the document (default: SOURCE_DATE_EPOCH or today)' },
  { flags: '--name <project>', description: 'project name shown in the document (default: package.json name)' },
  { flags: '--format <format>', description: 'document format: html (default) or markdown' },
  {
    flags: '--out <path>',
    description: 'document path: a file, written as one file (default: docs/rate-limit-design.html, or .md), or a folder ending in /',
  },
  { flags: '--layout <layout>', description: 'single, folder or auto (default: one file when --out names a file, else by length)' },
  {
    flags: '--code-dir <dir>',
    description:
      'where generated code should go, or none (default: none); the document prints its rules, Lua and gateway files and links the rest',
  },
  { flags: '--goals <list>', description: `Q1 what to protect against: ${GOALS.join(',')} (comma list) or unknown` },
  { flags: '--language <name>', description: 'Q2 language, e.g. TypeScript, JavaScript, Go' },
  { flags: '--framework <name>', description: `Q2 framework: ${FRAMEWORKS.join(', ')} or unknown` },
  { flags: '--topology <kind>', description: 'Q2 single or horizontal (several instances)' },
  { flags: '--instances <n>', description: 'Q2 number of instances at peak' },
  { flags: '--gateway <name>', description: `Q2 gateway / reverse proxy: ${GATEWAYS.join(', ')}` },
  { flags: '--store <name>', description: `Q2 limiter store: ${STORES.join(', ')}` },
  {
    flags: '--trusted-proxies <cidrs>',
    description: 'Q2 proxy address ranges allowed to name the client IP, e.g. 10.0.0.0/8,192.168.0.0/16, or none',
  },
  { flags: '--identities <list>', description: `Q3 what requests are keyed on: ${IDENTITIES.join(',')} (comma list)` },
  {
    flags: '--endpoint <spec>',
    description: `Q3 an endpoint (repeat for more; replaces detected ones), or none: ${ENDPOINT_SPEC_HELP}`,
    repeatable: true,
  },
  { flags: '--typical-rps <n>', description: 'Q4 typical requests per second' },
  { flags: '--peak-rps <n>', description: 'Q4 peak requests per second' },
  { flags: '--capacity-rps <n>', description: 'Q4 requests per second the backend can safely serve, if measured' },
  { flags: '--burstiness <level>', description: `Q4 ${BURSTINESS.join(', ')}` },
  { flags: '--clients <n>', description: 'Q4 distinct clients (API keys or apps)' },
  { flags: '--tenants <n>', description: 'Q4 distinct tenants / organisations' },
  { flags: '--users <n>', description: 'Q4 distinct user accounts' },
  { flags: '--client-rps <n>', description: 'Q4 requests per second one client sends at its busiest (sizes per-IP limits)' },
  {
    flags: '--clients-per-address <n>',
    description: 'Q4 clients active at once behind one IP address, e.g. carrier-grade NAT (sizes per-IP limits)',
  },
  { flags: '--plan <spec>', description: `Q5 a plan tier (repeat for more), or none: ${PLAN_SPEC_HELP}`, repeatable: true },
  { flags: '--quota-reset <kind>', description: `Q5 ${QUOTA_RESETS.join(', ')}` },
  { flags: '--quota-time-zone <zone>', description: 'Q5 IANA time zone of calendar resets, e.g. Europe/Berlin (default: UTC)' },
  { flags: '--quota-days <n>', description: 'Q5 length of a rolling quota window in days, 1-366 (default: 30)' },
  { flags: '--exhaustion <kind>', description: `Q5 when a quota runs out: ${EXHAUSTION.join(', ')}` },
  { flags: '--fail-mode <spec>', description: `Q6 when the store is down: rule-of-thumb, or ${FAIL_MODE_HELP}` },
  {
    flags: '--outbound <spec>',
    description: `Q7 a third-party API with its own limit (repeat for more), or none: ${OUTBOUND_SPEC_HELP}`,
    repeatable: true,
  },
  { flags: '--debug', description: 'print stack traces for unexpected errors' },
];
