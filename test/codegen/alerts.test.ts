/**
 * The Prometheus alerting rules: valid YAML with the rules-file structure, one rule per
 * designed alert, hostile text inert; and `promtool check rules` accepts the file
 * (promtool comes from Debian's prometheus package, which scripts/setup.sh installs).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ALERTS_PATH, generateAlerts } from '../../src/codegen/alerts.js';
import { promTemplateText } from '../../src/codegen/escape.js';
import type { Design } from '../../src/design/model.js';
import { exampleDesign, exampleNames } from '../helpers/examples.js';
import { EVIL, hostileDesign } from './support/hostile.js';

function promtool(): string | undefined {
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

const DURATION = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;

type Obj = Record<string, any>;

function checkStructure(design: Design): Obj {
  const file = generateAlerts(design);
  expect(file.path).toBe(ALERTS_PATH);
  expect(file.language).toBe('yaml');
  const doc = parseYaml(file.content) as Obj;
  expect(parseYaml(file.content, { version: '1.1' })).toEqual(doc);
  expect(Object.keys(doc)).toEqual(['groups']);
  expect(doc.groups).toHaveLength(1);
  const group = doc.groups[0];
  expect(group.name).toMatch(/^[a-z0-9-]+-ratelimit$/);
  expect(group.rules).toHaveLength(design.monitoring.alerts.length);
  const names = new Set<string>();
  group.rules.forEach((rule: Obj, i: number) => {
    const alert = design.monitoring.alerts[i]!;
    expect(rule.alert).toMatch(/^[A-Za-z_][A-Za-z0-9_]*$/);
    names.add(rule.alert);
    expect(rule.expr).toBe(alert.expr);
    expect(rule.for).toMatch(DURATION);
    expect(rule.labels.severity).toBe(alert.severity);
    expect(rule.annotations.summary).toBe(promTemplateText(`${alert.metric}: ${alert.condition}`));
    expect(rule.annotations.description).toBe(promTemplateText(alert.why));
  });
  expect(names.size).toBe(group.rules.length);
  return doc;
}

describe('Prometheus alerting rules', () => {
  for (const name of exampleNames()) {
    it(`example ${name}: structure`, () => {
      checkStructure(exampleDesign(name));
    });
  }

  it('hostile alert text stays one inert string; {{ never opens a template action', () => {
    const design = hostileDesign();
    const doc = checkStructure(design);
    const evil = doc.groups[0].rules.at(-1);
    expect(evil.alert).toBe('Evil_Alert_____Labels___');
    expect(evil.annotations.description).toBe(EVIL.replace('{{', '{{ "{{" }}'));
  });

  const tool = promtool();
  it('promtool is installed (scripts/setup.sh installs Debian prometheus for it)', () => {
    expect(tool, 'promtool not found: run scripts/setup.sh').toBeDefined();
  });

  it('promtool check rules accepts every example and the hostile design', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rl-alerts-'));
    try {
      const designs = [...exampleNames().map(exampleDesign), hostileDesign()];
      for (const [i, design] of designs.entries()) {
        const path = join(dir, `rules-${i}.yaml`);
        writeFileSync(path, generateAlerts(design).content);
        const { stdout } = await promisify(execFile)(tool as string, ['check', 'rules', path], { timeout: 30_000 });
        expect(stdout).toContain('SUCCESS');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
