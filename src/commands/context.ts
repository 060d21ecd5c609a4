/** Side effects the commands use, injected so tests can run them without a terminal or clock. */
export interface CommandContext {
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Today's date, YYYY-MM-DD (from SOURCE_DATE_EPOCH when set). */
  today: () => string;
}

export function nodeContext(): CommandContext {
  return {
    cwd: process.cwd(),
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    today: () => {
      const epoch = process.env.SOURCE_DATE_EPOCH;
      const d = epoch && /^\d+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date();
      return d.toISOString().slice(0, 10);
    },
  };
}
