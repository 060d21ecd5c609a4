#!/usr/bin/env node
/** Command-line wiring only: parse, call a command, print errors from the message catalog. */
import { Command, CommanderError, Option } from 'commander';
import { nodeContext } from './commands/context.js';
import { runGenerate } from './commands/generate.js';
import { runInit } from './commands/init.js';
import { INIT_OPTIONS } from './questionnaire/flags.js';
import { exampleNames } from './commands/load-design.js';
import { runSchema } from './commands/schema.js';
import { runValidate } from './commands/validate.js';
import { UserError } from './messages.js';
import { TOOL_VERSION } from './version.js';

const ctx = nodeContext();
const debug = process.argv.includes('--debug');

function answersOptions(cmd: Command): Command {
  return cmd
    .option('-a, --answers <file>', 'answers file (JSON) (default: rate-limit.answers.json)')
    .option('--example <name>', `use a built-in example instead of -a (${exampleNames().join(', ')})`)
    .option('--debug', 'print stack traces for unexpected errors');
}

const program = new Command()
  .name('rl-design')
  .description(
    'Design a rate-limiting system for an HTTP API from a short interview: a design document, the\n' +
      'enforcement code, a check against nine testable constraints, and proof against a real Redis.',
  )
  .version(TOOL_VERSION)
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .configureOutput({ writeOut: (s) => ctx.stdout(s), writeErr: (s) => ctx.stderr(s) });

// init: the interview (options are defined with the questions in questionnaire/flags.ts).
{
  const init = program
    .command('init')
    .description(
      'Interview: look at the project, ask only what it cannot tell, write rate-limit.answers.json and the design document. With --yes or without a TTY nothing is asked.',
    );
  for (const o of INIT_OPTIONS) {
    if (o.repeatable) init.option(o.flags, o.description, (value: string, previous: string[] = []) => [...previous, value]);
    else init.option(o.flags, o.description);
  }
  init.addHelpText(
    'after',
    `
Every choice flag also takes "unknown" (don't know: not asked, the design states an assumption).
Examples:
  $ rl-design init
  $ rl-design init --yes --format markdown --goals overload,abuse --framework express --store redis
  $ rl-design init --yes --plan free:60/minute:10000 --plan pro:600/minute --quota-reset calendar-month --quota-time-zone Europe/Berlin
Exit codes: 0 fine, 2 bad usage or an answers file in the way, 130 cancelled (nothing written).`,
  );
  init.action(async (opts) => {
    process.exitCode = await runInit(ctx, opts);
  });
}

answersOptions(
  program
    .command('generate')
    .description('Write the design document from an answers file.')
    .addOption(new Option('-f, --format <format>', 'document format: html or markdown (default: from answers, else html)'))
    .addOption(new Option('-l, --layout <layout>', 'auto, single or folder (default: from answers, else auto)'))
    .option('-o, --out <path>', 'document path (.md file) or folder (default: from answers, else docs/rate-limit-design)')
    .option('--date <YYYY-MM-DD>', 'generation date shown in the document (default: SOURCE_DATE_EPOCH or today)')
    .option('--force', 'overwrite files that were edited since rl-design wrote them')
    .option('--dry-run', 'list the files that would be written, write nothing'),
).action(async (opts) => {
  process.exitCode = await runGenerate(ctx, opts);
});

answersOptions(
  program
    .command('validate')
    .description('Check the design against the nine constraints (exit 1 on a violation, 2 on bad input).')
    .option('--json', 'machine-readable output'),
).action(async (opts) => {
  process.exitCode = await runValidate(ctx, opts);
});

program
  .command('schema')
  .description('Print the JSON Schema of the answers file.')
  .action(() => {
    process.exitCode = runSchema(ctx);
  });

program.addHelpText(
  'after',
  `
Examples:
  $ rl-design generate --example saas-platform --format markdown --out docs/
  $ rl-design generate -a rate-limit.answers.json --format markdown --layout folder
  $ rl-design validate -a rate-limit.answers.json          # CI gate
  $ rl-design schema > answers.schema.json

Exit codes: 0 fine, 1 constraint violation, 2 bad usage or bad input.`,
);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  if (e instanceof CommanderError) {
    process.exitCode = e.exitCode === 0 ? 0 : 2;
  } else if (e instanceof UserError) {
    ctx.stderr(`rl-design: ${e.message}\n`);
    process.exitCode = e.exitCode;
  } else {
    ctx.stderr(`rl-design: unexpected error: ${(e as Error).message}\n`);
    if (debug) ctx.stderr(`${(e as Error).stack ?? ''}\n`);
    else ctx.stderr('Run again with --debug for the stack trace, and report it.\n');
    process.exitCode = 70;
  }
}
