/**
 * The Nu HTML Checker (vnu-jar, needs a Java runtime: scripts/setup.sh installs one) finds no
 * error in any HTML page or stylesheet: every example and the hostile design, both layouts.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXAMPLES, exampleInput, hostileAnswers, inputFromAnswers } from './fixtures.js';
import { html } from './html-fixtures.js';

const VNU_JAR = String(createRequire(import.meta.url)('vnu-jar'));

interface VnuMessage {
  type: string;
  subType?: string;
  url?: string;
  lastLine?: number;
  message: string;
  extract?: string;
}

describe('Nu HTML Checker', () => {
  it('reports no error in any page or stylesheet', { timeout: 180_000 }, async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'rl-design-vnu-'));
    const inputs = [
      ...EXAMPLES.map((name) => [name, exampleInput(name)] as const),
      ['hostile', inputFromAnswers(hostileAnswers())] as const,
    ];
    const written: string[] = [];
    for (const [name, input] of inputs) {
      for (const layout of ['single', 'folder'] as const) {
        for (const file of await html(input, layout)) {
          const target = path.join(root, `${name}-${layout}`, ...file.path.split('/'));
          mkdirSync(path.dirname(target), { recursive: true });
          writeFileSync(target, file.content);
          written.push(target);
        }
      }
    }
    expect(written.filter((f) => f.endsWith('.html')).length).toBeGreaterThan(20);
    // A page with a known error, checked in the same run: the checker really reports errors.
    const canary = path.join(root, 'canary.html');
    writeFileSync(canary, '<!DOCTYPE html><html lang="en"><head><title>c</title></head><body><p id="a">x</p><p id="a">y</p></body></html>');
    written.push(canary);
    const r = spawnSync('java', ['-jar', VNU_JAR, '--errors-only', '--also-check-css', '--format', 'json', ...written], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    expect(r.error, 'java must be installed (scripts/setup.sh)').toBeUndefined();
    const report = JSON.parse(r.stdout || r.stderr) as { messages: VnuMessage[] };
    const errors = report.messages
      .filter((m) => m.type === 'error' || m.subType === 'fatal')
      .map(
        (m) =>
          `${path.relative(root, decodeURIComponent((m.url ?? '').replace(/^file:/, '')))}:${m.lastLine ?? '?'} ${m.message} ${m.extract ?? ''}`,
      );
    expect(errors.filter((e) => e.startsWith('canary.html')).length, 'the canary error was not reported').toBeGreaterThan(0);
    expect(errors.filter((e) => !e.startsWith('canary.html'))).toEqual([]);
  });
});
