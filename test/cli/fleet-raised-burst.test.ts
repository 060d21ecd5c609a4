/**
 * A fleet-wide edge rule counted in each gateway node ships its burst divided by the K nodes,
 * but never below 1 a node: a stated burst below K is raised, and K nodes together admit a larger
 * burst than stated. The document, the gateway file and generate's warning state the raised
 * fleet-wide burst, as they state a raised rate.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Answers } from '../../src/answers/schema.js';
import { buildDesign } from '../../src/design/build.js';
import { exampleAnswers } from '../helpers/examples.js';
import { runCli, tempDir } from '../helpers/cli.js';

const DATE = '2026-12-02';
const RAISED = 'the fleet admits a burst of up to 2, 2 times the stated 1';

/** saas-platform (nginx, 2 nodes) with the ceiling's burst set to 1: 1 a node, 2 for the fleet. */
const burstOne = (): Answers => ({ ...exampleAnswers('saas-platform'), rules: [{ id: 'global-ceiling', burst: 1 }] }) as Answers;

describe("a fleet-wide rule's burst raised across gateway nodes", () => {
  it('is stated fleet-wide in the rule and in the enforcement text, with the per-node share', () => {
    const design = buildDesign(burstOne(), { date: DATE });
    const ceiling = design.rules.find((r) => r.id === 'global-ceiling');
    expect(ceiling?.perNode).toMatchObject({ nodes: 2, burst: 1 });
    expect(ceiling?.rationale).toContain(`each node ships 2,400 per second, burst 1 and ${RAISED}`);
    expect(ceiling?.rationale).not.toContain('never more');
    expect(JSON.stringify(design.enforcement)).toContain('so together they admit 4,800 per 1 s, burst 2. Warning');
  });

  it('is stated with a raised rate too (both raised: 2 req/s and burst 2 on 3 nodes)', () => {
    const a = exampleAnswers('saas-platform');
    const tiny = {
      ...a,
      traffic: { ...a.traffic, peakRps: 1, typicalRps: 0.5, headroom: 2 },
      stack: { ...a.stack, gatewayNodes: 3 },
    } as Answers;
    const ceiling = buildDesign(tiny, { date: DATE }).rules.find((r) => r.id === 'global-ceiling');
    expect(ceiling?.rationale).toContain(
      "global-ceiling's 2 per second and burst 2 divided by the 3 nginx nodes (stack.gatewayNodes) are less",
    );
    expect(ceiling?.rationale).toContain(
      'the fleet admits up to 3 per second, 1.5 times the stated figure, and a burst of up to 3, 1.5 times the stated 2',
    );
  });

  it('is stated in the shipped nginx file and in generate’s warning', () => {
    const dir = tempDir();
    const file = path.join(dir, 'answers.json');
    const { $schema: _s, openapi: _o, ...answers } = burstOne() as Answers & { $schema?: string; openapi?: unknown };
    writeFileSync(file, JSON.stringify(answers));
    const r = runCli([
      'generate',
      '-a',
      file,
      '--format',
      'markdown',
      '--out',
      path.join(dir, 'doc.md'),
      '--code-dir',
      path.join(dir, 'code'),
      '--date',
      DATE,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`warning: global-ceiling's burst 1 divided by the 2 nginx nodes`);
    expect(r.stderr).toContain(RAISED);
    const conf = readFileSync(path.join(dir, 'code', 'gateway', 'nginx.conf'), 'utf8');
    expect(conf).toContain(RAISED);
    expect(conf).not.toContain('divided by the 2 nginx nodes (stack.gatewayNodes), rounded down');
  });
});
