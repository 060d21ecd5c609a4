/**
 * Verify results in the document: `applyResults` puts a run's results on the design's six
 * scenarios (pure), and the sidecar file `<answers>.verify.json` beside the answers file keeps
 * them, with the sha256 of the answers text they were measured for, so `generate` can show
 * them as long as the answers have not changed since (`loadResultsFor`).
 */
import path from 'node:path';
import type { Design, Scenario } from '../design/model.js';
import { readTextFile, sha256 } from '../io/write.js';
import type { ScenarioResult, VerifyReport } from './types.js';

/** What the document needs from a run. */
export interface VerifyResults {
  /** As the document prints it after "on Redis": "7.0.15", or "7.2.4 (Valkey 8.0.1)". */
  redisVersion: string;
  /** YYYY-MM-DD of the run. */
  date: string;
  results: ScenarioResult[];
}

export function resultsOf(report: VerifyReport): VerifyResults {
  const s = report.server;
  return {
    redisVersion: s.product === 'Valkey' ? `${s.redisVersion} (Valkey ${s.version})` : s.version,
    date: report.date,
    results: report.results,
  };
}

function ms(x: number): string {
  return `${x < 10 ? x.toFixed(2) : Math.round(x)} ms`;
}

/** One design scenario's result from the per-rule runs of the same scenario id. */
export function scenarioResult(scenario: Scenario, results: VerifyResults): Scenario['result'] | undefined {
  const runs = results.results.filter((r) => r.scenario === scenario.id && r.status !== 'skipped');
  if (!scenario.applicable || runs.length === 0) return undefined;
  // A key without a TTL on a rule this scenario ran on fails the scenario in the document too.
  const ttl = results.results.filter(
    (r) => r.scenario === 'key-ttl' && r.status === 'failed' && runs.some((x) => x.ruleIds.includes(r.ruleId)),
  );
  const failed = runs.filter((r) => r.status === 'failed');
  const passed = failed.length === 0 && ttl.length === 0;
  const clean = (t: string): string => t.replace(/\.$/, '');
  const parts: string[] = [];
  if (failed.length > 0) {
    parts.push(
      `Failed on ${failed.length} of ${runs.length} ${runs.some((r) => r.ruleIds.length > 1) ? 'rule pair' : 'rule'}${runs.length === 1 ? '' : 's'}: ` +
        `${failed.map((r) => `${r.ruleIds.join(' + ')}: ${clean(r.measured)}${r.detail ? ` (${clean(r.detail)})` : ''}`).join('; ')}.`,
    );
  }
  for (const t of ttl) parts.push(`Keys written for ${t.ruleId} break the TTL rule: ${clean(t.detail || t.measured)}.`);
  const ok = runs.filter((r) => r.status === 'passed');
  const unit = runs.some((r) => r.ruleIds.length > 1) ? 'rule pair' : 'rule';
  if (failed.length === 0)
    parts.push(runs.length === 1 ? `Ran on the one ${unit} it applies to.` : `Ran on all ${runs.length} ${unit}s it applies to.`);
  else if (ok.length > 0) parts.push(`Passed on the other ${ok.length}.`);
  // The rules the document names for this scenario, measured.
  const shown = ok.filter((r) => r.ruleIds.some((id) => scenario.ruleIds.includes(id)));
  for (const r of shown.length ? shown : ok.slice(0, 1)) {
    parts.push(`${r.ruleIds.join(' + ')}: ${clean(r.measured)}${r.scaling ? ` (scaled: ${clean(r.scaling)})` : ''}.`);
  }
  const lat = runs.map((r) => r.latency).filter((l): l is NonNullable<ScenarioResult['latency']> => !!l);
  const latency = lat.length
    ? {
        calls: lat.reduce((a, l) => a + l.calls, 0),
        p50Ms: Math.max(...lat.map((l) => l.p50Ms)),
        p99Ms: Math.max(...lat.map((l) => l.p99Ms)),
      }
    : undefined;
  if (latency) parts.push(`Limiter calls: ${latency.calls}, latency p50 ${ms(latency.p50Ms)}, p99 ${ms(latency.p99Ms)} (slowest rule).`);
  return {
    passed,
    detail: parts.join(' '),
    redisVersion: results.redisVersion,
    date: results.date,
    runs: runs.map((r) => ({
      ruleId: r.ruleId,
      passed: r.status === 'passed',
      expected: r.expected,
      measured: r.measured,
      ...(r.scaling ? { scaling: r.scaling } : {}),
    })),
    ...(latency ? { latency } : {}),
  };
}

/**
 * The design with each scenario's `result` from the run, and the worst-case rows it measured
 * (pure; scenarios not run keep none).
 */
export function applyResults(design: Design, results: VerifyResults): Design {
  const { worstCaseMeasured: _old, ...rest } = design;
  // the worst-case scenario's rows, and the memory fallback's, measured during the store outage
  const measured = results.results.flatMap((r) => r.measurements ?? []);
  return {
    ...rest,
    scenarios: design.scenarios.map((s) => {
      const { result: _old, ...rest } = s;
      const result = scenarioResult(s, results);
      return result ? { ...rest, result } : rest;
    }),
    ...(measured.length > 0 ? { worstCaseMeasured: measured } : {}),
  };
}

export const SIDECAR_SUFFIX = '.verify.json';

/** `rate-limit.answers.json` -> `rate-limit.answers.verify.json`, in the same folder. */
export function sidecarPath(answersFile: string): string {
  const dir = path.dirname(answersFile);
  const base = path.basename(answersFile).replace(/\.json$/i, '');
  return path.join(dir, `${base}${SIDECAR_SUFFIX}`);
}

export interface Sidecar {
  tool: 'rl-design';
  kind: 'verify-results';
  /** The answers file's name, and the sha256 of its text when the run was made. */
  answers: string;
  answersSha256: string;
  results: VerifyResults;
  report: VerifyReport;
}

export function sidecarText(report: VerifyReport, answersFile: string, answersText: string): string {
  const sidecar: Sidecar = {
    tool: 'rl-design',
    kind: 'verify-results',
    answers: path.basename(answersFile),
    answersSha256: sha256(answersText),
    results: resultsOf(report),
    report,
  };
  return `${JSON.stringify(sidecar, null, 2)}\n`;
}

/** Parses a sidecar; undefined when it is not one. */
export function parseSidecar(text: string): Sidecar | undefined {
  try {
    const s = JSON.parse(text) as Partial<Sidecar>;
    if (s?.tool !== 'rl-design' || s.kind !== 'verify-results' || typeof s.answersSha256 !== 'string') return undefined;
    const r = s.results;
    if (!r || typeof r.redisVersion !== 'string' || typeof r.date !== 'string' || !Array.isArray(r.results)) return undefined;
    return s as Sidecar;
  } catch {
    return undefined;
  }
}

/**
 * The results recorded beside an answers file, when they were measured for exactly this
 * answers text; undefined when there are none, they are unreadable, or the answers changed.
 * For `generate`: `const results = await loadResultsFor(file); if (results) design = applyResults(design, results);`
 */
export async function loadResultsFor(answersFile: string, answersText?: string): Promise<VerifyResults | undefined> {
  try {
    const text = answersText ?? (await readTextFile(answersFile, 'answersNotFound'));
    const sidecar = parseSidecar(await readTextFile(sidecarPath(answersFile), 'answersNotFound'));
    if (!sidecar || sidecar.answersSha256 !== sha256(text)) return undefined;
    return sidecar.results;
  } catch {
    return undefined;
  }
}
