/** The verify report as text: server checks, then a table per rule, then the totals. */
import type { VerifyReport } from './types.js';
import { SCENARIO_TITLES } from './types.js';

const LEVEL: Record<string, string> = { ok: 'ok  ', info: 'info', warn: 'WARN', fail: 'FAIL' };
const STATUS: Record<string, string> = { passed: 'PASS', failed: 'FAIL', skipped: 'SKIP' };

function ms(x: number): string {
  return x < 10 ? x.toFixed(2) : String(Math.round(x));
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

export function formatReport(report: VerifyReport): string {
  const out: string[] = [];
  const s = report.server;
  const product = s.product === 'Valkey' ? `Valkey ${s.version}` : `Redis ${s.version}`;
  out.push(`Verifying ${report.project} on ${product} (${s.mode}, ${s.spawned ? `started by rl-design at ${s.address}` : s.address}).`);
  out.push('');
  out.push('Server');
  const idWidth = Math.max(...report.checks.map((c) => c.id.length));
  for (const c of report.checks) out.push(`  ${LEVEL[c.level]}  ${pad(c.id, idWidth)}  ${c.message}`);

  const titleWidth = Math.max(...Object.values(SCENARIO_TITLES).map((t) => t.length));
  // a skip reason is said once, in full, under the first rule it concerns
  const skipSaid = new Map<string, string>();
  for (const rule of report.rules) {
    out.push('');
    const facts = [rule.algorithm, rule.layer, rule.failMode ? `fail ${rule.failMode}` : undefined].filter(Boolean).join(', ');
    out.push(`${rule.ruleId}  (${facts})${rule.key ? `  ${rule.key}` : ''}`);
    if (!rule.verifiable) {
      out.push(`  ${rule.reason}`);
      continue;
    }
    const rows = report.results.filter((r) => r.ruleId === rule.ruleId);
    out.push(`  ${pad('', 4)}  ${pad('scenario', titleWidth)}  ${pad('p50 ms', 7)} ${pad('p99 ms', 7)}  measured`);
    let lastScaling: string | undefined;
    for (const r of rows) {
      const title = SCENARIO_TITLES[r.scenario];
      const lat = r.latency ? `${pad(ms(r.latency.p50Ms), 7)} ${pad(ms(r.latency.p99Ms), 7)}` : `${pad('-', 7)} ${pad('-', 7)}`;
      let measured = r.status === 'skipped' ? r.detail : r.measured;
      if (r.status === 'skipped' && measured !== undefined) {
        const first = skipSaid.get(measured);
        if (first === undefined) skipSaid.set(measured, rule.ruleId);
        else measured = `as for ${first}`;
      }
      out.push(
        `  ${STATUS[r.status]}  ${pad(title, titleWidth)}  ${lat}  ${measured}${r.ruleIds.length > 1 ? `  [with ${r.ruleIds.slice(1).join(', ')}]` : ''}`,
      );
      if (r.status === 'failed') {
        const indent = ' '.repeat(8 + titleWidth);
        if (r.expected) out.push(`${indent}expected: ${r.expected}`);
        if (r.detail) out.push(`${indent}${r.detail}`);
      } else if (r.scaling && r.status === 'passed' && r.scaling !== lastScaling) {
        out.push(`${' '.repeat(8 + titleWidth)}scaled: ${r.scaling}`);
      }
      if (r.scaling) lastScaling = r.scaling;
    }
  }
  out.push('');
  const c = report.counts;
  const total = c.passed + c.failed + c.skipped;
  const verifiable = report.rules.filter((r) => r.verifiable).length;
  out.push(
    `${total} scenario runs on ${verifiable} of ${report.rules.length} rules: ${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped.` +
      (report.latency
        ? ` Latency of ${report.latency.calls} limiter calls made one at a time: p50 ${ms(report.latency.p50Ms)} ms, p99 ${ms(report.latency.p99Ms)} ms.`
        : ''),
  );
  out.push(`Every key was written under ${report.keyPrefix} and deleted (${report.keysDeleted} keys, SCAN + UNLINK).`);
  const failedChecks = report.checks.filter((x) => x.level === 'fail');
  out.push(
    report.passed
      ? 'Verification passed.'
      : `Verification FAILED${failedChecks.length ? ` (${failedChecks.map((x) => x.id).join(', ')} check failed)` : ''}.`,
  );
  return `${out.join('\n')}\n`;
}

/** The warnings worth shouting about on stderr (eviction above all). */
export function loudWarnings(report: VerifyReport): string[] {
  return report.checks.filter((c) => c.level === 'warn').map((c) => `WARNING: ${c.message}`);
}
