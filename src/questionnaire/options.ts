/**
 * The `rl-design init` options as commander declares them: the command's own, then one flag per
 * interview question (from the question table, in its order), so no question is without its flag.
 */
import { QUESTIONS } from './questions.js';

interface InitOption {
  flags: string;
  description: string;
  repeatable?: boolean;
}

/** init's own options, which answer no question. */
export const COMMAND_OPTIONS: readonly InitOption[] = [
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
  {
    flags: '--name <project>',
    description:
      'project name shown in the document (default: the name package.json, go.mod, pyproject.toml, pom.xml, settings.gradle, Cargo.toml, a .csproj, composer.json or mix.exs at the root gives)',
  },
  { flags: '--debug', description: 'print stack traces for unexpected errors' },
];

/** Every init option, in --help order: the command's own, the questions' flags, then --debug. */
export const INIT_OPTIONS: readonly InitOption[] = [
  ...COMMAND_OPTIONS.slice(0, -1),
  ...QUESTIONS.map((q) => ({
    flags: q.flag,
    description: `${q.item ? `Q${q.item} ` : ''}${q.help}`,
    ...(q.repeatable ? { repeatable: true } : {}),
  })),
  ...COMMAND_OPTIONS.slice(-1),
];
