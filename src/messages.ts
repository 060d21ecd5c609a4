/**
 * Every user-facing error text, by id. One top-level handler (cli.ts) prints them;
 * a stack trace only appears with --debug.
 */
const MESSAGES = {
  answersNotFound: 'Answers file not found: {{file}}. Pass one with -a FILE, or run `rl-design init` to create it.',
  answersUnreadable: 'Cannot read answers file {{file}}: {{reason}}',
  answersNotJson: 'Answers file {{file}} is not valid JSON: {{reason}}',
  answersInvalid: 'Answers file {{file}} has {{count}} problem(s):\n{{problems}}',
  badOption: 'Option {{option}}: {{reason}}',
  deadLink: 'Refusing to write: the rendered document has a dead link: {{detail}}',
  editedFile:
    'Refusing to overwrite {{file}}: it was changed since rl-design wrote it. Re-run with --force to replace it, or move your edits elsewhere.',
  foreignFile: 'Refusing to overwrite {{file}}: rl-design did not write it. Re-run with --force to replace it, or choose another --out.',
  outputIsDirectory: 'Cannot write {{file}}: a directory is in the way.',
  symlinkRefused:
    'Refusing to write through {{file}}: it is a symbolic link, and rl-design never follows one where it writes (not even with --force). Remove the link, or choose another --out or --code-dir.',
  notAFolder: 'Cannot write below {{file}}: it is not a folder.',
  notRegularFile: 'Refusing to overwrite {{file}}: it is not a regular file (a device, pipe or socket).',
  systemPath: 'Refusing to write to {{file}}: it is under /proc, /sys or /dev.',
  outputsCollide: 'Two outputs of this run would both be written to {{file}}; choose different --out and --code-dir folders.',
  outputsOverlap:
    'The document ({{doc}}) and the code folder ({{code}}) overlap: one would overwrite the other. Choose --out and --code-dir folders that do not contain each other.',
  outputOutsideProject:
    '{{field}} in {{file}} is {{value}}, which is outside {{base}}. An answers file may only write inside its own folder or the current folder; to write there, pass the path on the command line ({{option}}).',
  outputLocked:
    'Another rl-design run (process {{pid}}) is writing to {{folder}}; try again when it has finished. A run that crashed leaves no lock behind; if none is running, delete {{lock}}.',
  answersTooLarge: 'Answers file {{file}} is larger than {{limit}}; an answers file is a few kilobytes.',
  writeFailed: 'Could not write {{file}}: {{reason}}',
  staleExample: 'Example output {{file}} is stale; run `npm run examples`.',
  initPreviousInvalid:
    'init reuses an existing answers file as its defaults, and will not replace one it cannot load: nothing was written. Fix it, or re-run with --force to start from scratch and replace it.',
  answersFileExists:
    'Refusing to replace {{file}}: it exists and differs from these answers. Re-run with --force to replace it, or with --answers-file to write somewhere else.',
  answersPathIsDirectory: 'Cannot write the answers to {{file}}: it is a directory. Pass a file name with --answers-file.',
  initCancelled: 'Cancelled: nothing was written.',
  initDocumentFailed: 'Nothing was written (neither the answers nor the document): {{reason}}',
  redisServerMissing:
    'redis-server was not found on PATH, and verify needs a Redis. Install it (apt-get install redis-server, brew install redis) or point verify at a running server with --redis redis://host:port.',
  redisServerFailed: 'Could not start redis-server: {{reason}}',
  redisConnectFailed: 'Cannot connect to Redis at {{address}}: {{reason}}',
  redisReplica:
    'Refusing to verify against {{address}}: it is a replica. Replicas refuse writes and take their data from the primary; pass the primary with --redis.',
  redisLost: 'Lost Redis at {{address}} during the run ({{reason}}): the results are discarded. {{keys}}',
  verifyTimedOut: 'verify did not finish within {{seconds}} s against {{address}}: the results are discarded. {{keys}}',
  luaDirInvalid: 'RL_DESIGN_LUA_DIR={{dir}} (a testing hook): {{reason}}',
  openapiUnreadable: 'openapi.path in {{file}} is {{value}}: {{reason}}. Nothing was written.',
} as const;

type MessageId = keyof typeof MESSAGES;

export function formatMessage(id: MessageId, data: Record<string, string | number> = {}): string {
  return MESSAGES[id].replace(/\{\{(\w+)\}\}/g, (_, k: string) => (k in data ? String(data[k]) : `{{${k}}}`));
}

/** An expected failure: printed without a stack trace, with its exit code. */
export class UserError extends Error {
  constructor(
    readonly messageId: MessageId,
    readonly data: Record<string, string | number> = {},
    readonly exitCode: 1 | 2 = 2,
  ) {
    super(formatMessage(messageId, data));
    this.name = 'UserError';
  }
}
