/**
 * promtool (Debian's prometheus package, which scripts/setup.sh installs) for the alert tests:
 * `promtool check rules` on a rules file, and `promtool test rules` running unit tests of the
 * rules against given series.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { stringify as stringifyYaml } from 'yaml';
import type { AlertSpec } from '../../src/design/model.js';
import { promTemplateText } from '../../src/escape/index.js';

/** The promtool binary on PATH (or /usr/bin, /usr/local/bin), if any. */
export function promtool(): string | undefined {
  for (const d of [...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/usr/local/bin']) {
    try {
      accessSync(join(d, 'promtool'), constants.X_OK);
      return join(d, 'promtool');
    } catch {
      // next
    }
  }
  return undefined;
}

/** `promtool test rules` over the rules file's content, with these unit tests (its `tests:` list). */
export async function runPromtool(rules: string, tests: Record<string, unknown>[]): Promise<{ ok: boolean; output: string }> {
  const tool = promtool();
  if (tool === undefined) return { ok: false, output: 'promtool not found: run scripts/setup.sh' };
  const dir = mkdtempSync(join(tmpdir(), 'rl-promtest-'));
  try {
    writeFileSync(join(dir, 'rules.yaml'), rules);
    writeFileSync(join(dir, 'test.yaml'), stringifyYaml({ rule_files: ['rules.yaml'], evaluation_interval: '1m', tests }));
    try {
      const { stdout, stderr } = await promisify(execFile)(tool, ['test', 'rules', join(dir, 'test.yaml')], { timeout: 60_000 });
      return { ok: true, output: stdout + stderr };
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string; message: string };
      return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}${e.message}` };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An alert promtool must see firing: its labels plus the severity and annotations the rules file gives it. */
export function firing(alert: AlertSpec, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    exp_labels: { ...labels, severity: alert.severity, component: 'ratelimit' },
    exp_annotations: { summary: promTemplateText(`${alert.metric}: ${alert.condition}`), description: promTemplateText(alert.why) },
  };
}

/** One unit test of `promtool test rules`, evaluated every minute: the series it reads and what each alert does when. */
export function minuteTest(series: { series: string; values: string }[], checks: Record<string, unknown>[]): Record<string, unknown> {
  return { interval: '1m', input_series: series, alert_rule_test: checks };
}

/** At `at`, promtool must see the alert firing for the labels (besides the rules file's own). */
export function firesAt(at: string, alert: AlertSpec, labels: Record<string, string> = {}): Record<string, unknown> {
  return { eval_time: at, alertname: alert.name, exp_alerts: [firing(alert, labels)] };
}

/** At `at`, promtool must see the alert quiet. */
export function quietAt(at: string, alert: AlertSpec): Record<string, unknown> {
  return { eval_time: at, alertname: alert.name, exp_alerts: [] };
}

/** `promtool test rules` passes every unit test over the rules file's content (its output on failure). */
export async function expectPromtoolPasses(rules: string, tests: Record<string, unknown>[]): Promise<void> {
  const r = await runPromtool(rules, tests);
  expect(r.ok, r.output).toBe(true);
}
