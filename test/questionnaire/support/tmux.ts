/**
 * Drives a program through a real pseudo-terminal: a private tmux server per session
 * (its own socket, so a developer's tmux is never touched), keys sent with send-keys,
 * the screen read with capture-pane, the exit status written by a wrapping shell.
 * Waits poll the screen for text, never sleep blindly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export function tmuxAvailable(): boolean {
  return spawnSync('tmux', ['-V'], { encoding: 'utf8' }).status === 0;
}

export interface TmuxOptions {
  cwd: string;
  command: string[];
  env?: Record<string, string>;
  width?: number;
  height?: number;
}

let counter = 0;

export class TmuxSession {
  private readonly socket: string;
  private readonly confDir: string;
  private readonly conf: string;
  private readonly statusFile: string;
  private closed = false;

  constructor(private readonly options: TmuxOptions) {
    this.socket = `rl-design-test-${process.pid}-${Date.now()}-${counter++}`;
    this.confDir = mkdtempSync(path.join(tmpdir(), 'rl-tmux-'));
    this.conf = path.join(this.confDir, 'tmux.conf');
    this.statusFile = path.join(this.confDir, 'status');
    writeFileSync(
      this.conf,
      ['set -g remain-on-exit on', 'set -g history-limit 50000', 'set -g status off', 'set -s escape-time 0', ''].join('\n'),
    );
  }

  private tmux(args: string[]): string {
    return execFileSync('tmux', ['-u', '-L', this.socket, '-f', this.conf, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  }

  start(): this {
    const env = Object.entries(this.options.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    this.tmux([
      'new-session',
      '-d',
      '-s',
      'main',
      '-x',
      String(this.options.width ?? 200),
      '-y',
      String(this.options.height ?? 50),
      '-c',
      this.options.cwd,
      ...env,
      '-e',
      `RL_TEST_STATUS_FILE=${this.statusFile}`,
      // The shell collects the exit status (tmux's own pane status can lag); a Ctrl-C that
      // reaches it as a signal runs the no-op trap instead of ending it.
      'sh',
      '-c',
      'trap : INT; "$@"; echo "$?" > "$RL_TEST_STATUS_FILE"',
      'sh',
      ...this.options.command,
    ]);
    return this;
  }

  /** Everything the program has printed so far (scrollback included), lines joined where they wrapped. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-t', 'main', '-S', '-', '-E', '-']);
  }

  async waitFor(pattern: string | RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      last = this.screen();
      if (typeof pattern === 'string' ? last.includes(pattern) : pattern.test(last)) return last;
      if (this.isDead()) {
        last = this.screen();
        if (typeof pattern === 'string' ? last.includes(pattern) : pattern.test(last)) return last;
        throw new Error(`program exited while waiting for ${String(pattern)}; screen:\n${last}`);
      }
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${String(pattern)}; screen:\n${last}`);
      await new Promise((r) => setTimeout(r, 40));
    }
  }

  /** Waits for an active inquirer prompt ("? message"; answered ones turn into "✔ message"). */
  waitForPrompt(message: string, timeoutMs?: number): Promise<string> {
    return this.waitFor(`? ${message}`, timeoutMs);
  }

  /** Named keys (Enter, Down, Up, Space, C-c, ...). */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', 'main', ...keys]);
  }

  /** Literal text. */
  type(text: string): void {
    this.tmux(['send-keys', '-t', 'main', '-l', text]);
  }

  /** True once the program has ended. */
  isDead(): boolean {
    return this.exitStatus() !== undefined;
  }

  /** Exit status once the program has ended, else undefined (written by the wrapping shell). */
  exitStatus(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.statusFile, 'utf8');
    } catch {
      return undefined;
    }
    return /^\d+\n$/.test(text) ? Number(text.trim()) : undefined;
  }

  async waitExit(timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = this.exitStatus();
      if (s !== undefined) return s;
      if (Date.now() > deadline) throw new Error(`timed out waiting for the program to exit; screen:\n${this.screen()}`);
      await new Promise((r) => setTimeout(r, 40));
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.tmux(['kill-server']);
    } catch {
      // already gone
    }
    rmSync(this.confDir, { recursive: true, force: true });
  }
}
