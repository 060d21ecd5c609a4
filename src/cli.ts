/** Command-line wiring only: parse, call a command, print errors from the message catalog. */
import { Command, CommanderError, Option } from 'commander';
import { nodeContext } from './commands/context.js';
import { exampleNames } from './paths.js';
import { INIT_OPTIONS } from './questionnaire/options.js';
import { UserError } from './messages.js';
import { TOOL_VERSION } from './version.js';

// A reader that stops early (`rl-design schema | head`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

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
    'Design a rate-limiting system for an HTTP API from a short interview: a design document, ' +
      'the enforcement code, a check against nine testable constraints, and proof against a real Redis.',
  )
  .version(TOOL_VERSION)
  .showHelpAfterError('(run with --help for usage)')
  .exitOverride()
  .configureOutput({ writeOut: (s) => ctx.stdout(s), writeErr: (s) => ctx.stderr(s) });

// init: the interview (its options are made from the question table, questionnaire/questions.ts).
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
Q1-Q7 in front of a flag: the interview question it answers, so that question is not asked:
  Q1 what to protect against, Q2 the stack, Q3 identities and endpoints, Q4 traffic,
  Q5 limits promised to customers, Q6 behaviour when the store is down, Q7 third-party APIs.
Every choice flag also takes "unknown" (don't know: not asked, the design states an assumption).
Examples:
  $ rl-design init
  $ rl-design init --yes --format markdown --goals overload,abuse --framework express --store redis
  $ rl-design init --yes --plan free:60/minute:10000 --plan pro:600/minute --quota-reset calendar-month --quota-time-zone Europe/Berlin
Exit codes: 0 fine, 2 bad usage or an answers file in the way, 130 cancelled (nothing written).`,
  );
  init.action(async (opts) => {
    const { runInit } = await import('./commands/init.js');
    process.exitCode = await runInit(ctx, opts);
  });
}

answersOptions(
  program
    .command('generate')
    .description('Write the design document from an answers file.')
    .addOption(new Option('-f, --format <format>', 'document format: html or markdown (default: from answers, else html)'))
    .addOption(new Option('-l, --layout <layout>', 'auto, single or folder (default: from answers, else auto)'))
    .option(
      '-o, --out <path>',
      "document path (.html or .md file: without --format, its extension picks the format) or folder, relative to the current folder (default: output.path of the answers, else docs/rate-limit-design, relative to the answers file's folder)",
    )
    .option(
      '-c, --code-dir <dir>',
      "also write the enforcement code (Lua, middleware, gateway and alert config) as source files here, relative to the current folder (default: output.codeDir of the answers, relative to the answers file's folder whatever --out says)",
    )
    .addOption(
      new Option(
        '--diagrams <renderer>',
        'HTML diagrams: beautiful-mermaid (built in, default) or mermaid-cli (uses @mermaid-js/mermaid-cli if installed)',
      ),
    )
    .option('--date <YYYY-MM-DD>', 'generation date shown in the document (default: SOURCE_DATE_EPOCH or today)')
    .option(
      '--openapi-merged',
      "also write the answers' OpenAPI document with the rate-limit overlay applied (openapi/openapi.rate-limited.yaml in the code folder), and a Spectral ruleset for it (openapi/spectral.yaml: OWASP's rules, the design's deliberate silences declared)",
    )
    .option('--force', 'overwrite files that were edited since rl-design wrote them')
    .option('--prune', 'remove files an earlier run for these answers wrote and this design no longer generates (never edited ones)')
    .option('--dry-run', 'list the files that would be written, write nothing'),
).action(async (opts) => {
  const { runGenerate } = await import('./commands/generate.js');
  process.exitCode = await runGenerate(ctx, opts);
});

answersOptions(
  program
    .command('validate')
    .description('Check the design against the nine constraints (exit 1 on a violation, 2 on bad input).')
    .option(
      '--code-dir <dir>',
      "read the shipped files (gateway config, middleware data, alert rules) from this code folder, relative to the current folder (default: output.codeDir of the answers, relative to the answers file's folder); a file the folder does not hold is checked as generated",
    )
    .option('--json', 'machine-readable output')
    .option(
      '--sarif',
      'print a SARIF 2.1.0 log for code scanning: one rule per constraint, each finding located in the answers file (or the generated file it concerns) by line and column; a constraint that passes for a stated reason adds a result of kind pass with that reason',
    ),
).action(async (opts) => {
  const { runValidate } = await import('./commands/validate.js');
  process.exitCode = await runValidate(ctx, opts);
});

answersOptions(
  program
    .command('verify')
    .description(
      "Run the design's test scenarios against a real Redis with the generated Lua scripts (exit 1 on a failure, 2 on bad input or no usable Redis).",
    )
    .option(
      '--redis <url>',
      'use this Redis (redis://[user:password@]host:port[/db]); default: start redis-server from PATH on a free loopback port',
    )
    .option('--json', 'machine-readable output')
    .option('--write', 'record the results beside the answers file (<answers>.verify.json) and regenerate the document with them')
    .option('--force', 'with --write: overwrite files that were edited since rl-design wrote them')
    .addHelpText(
      'after',
      `
On a Redis you name, verify writes only keys under a fresh prefix (rl-verify:<random>:) and deletes
exactly those afterwards (SCAN + UNLINK); it refuses a replica, and reports the server's version,
maxmemory-policy and cluster mode against the design. The store-outage scenario runs only on a
redis-server that verify started itself.
Examples:
  $ rl-design verify -a rate-limit.answers.json
  $ rl-design verify -a rate-limit.answers.json --redis redis://127.0.0.1:6379 --json
  $ rl-design verify -a rate-limit.answers.json --write`,
    ),
).action(async (opts) => {
  const { runVerify } = await import('./commands/verify.js');
  process.exitCode = await runVerify(ctx, opts);
});

program
  .command('schema')
  .description('Print the JSON Schema of the answers file.')
  .action(async () => {
    const { runSchema } = await import('./commands/schema.js');
    process.exitCode = runSchema(ctx);
  });

program.addHelpText(
  'after',
  `
Examples:
  $ rl-design init                                          # interview -> answers, document, code
  $ rl-design generate --example saas-platform --out docs/ --code-dir ratelimit/
  $ rl-design generate -a rate-limit.answers.json --format markdown --layout folder
  $ rl-design validate -a rate-limit.answers.json          # CI gate
  $ rl-design validate -a rate-limit.answers.json --sarif > rl-design.sarif   # code scanning
  $ rl-design verify -a rate-limit.answers.json --write    # scenarios against a real Redis
  $ rl-design schema > answers.schema.json

Environment:
  SOURCE_DATE_EPOCH             the generation date when --date is not given (reproducible builds)
  RL_DESIGN_CACHE_DIR           rl-design's cache folder (default: $XDG_CACHE_HOME/rl-design or
                                ~/.cache/rl-design): compiled code and drawn diagrams, a speed-up only
  RL_DESIGN_CACHE=off           no cache at all; NODE_DISABLE_COMPILE_CACHE=1: no compiled-code cache

Exit codes: 0 fine, 1 constraint violation or failed verification, 2 bad usage or bad input.`,
);

/** Runs the command line (bin.ts calls it with process.argv). */
export async function run(argv: readonly string[]): Promise<void> {
  try {
    await program.parseAsync([...argv]);
  } catch (e) {
    reportError(e);
  }
}

function reportError(e: unknown): void {
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
