/** The short summary init prints at the end: the limit matrix at a glance, fail modes, headers, files. */
import { conventionName } from '../design/contract.js';
import { countedPerNode, fleetAdmission, gatewayNodeName, gatewayNodes } from '../design/gateway-behaviour.js';
import { formatNumber, rpsText } from '../format.js';
import type { Design, MatrixRule } from '../design/model.js';
import { printable } from '../questionnaire/detect/index.js';
import { wrapLine } from '../questionnaire/wrap.js';

const PERIODS: Record<number, string> = { 1: 's', 60: 'min', 3600: 'h', 86400: 'day' };

function periodText(seconds: number): string {
  const named = PERIODS[seconds];
  if (named) return named;
  if (seconds % 86400 === 0) return `${formatNumber(seconds / 86400)} days`;
  if (seconds % 3600 === 0) return `${formatNumber(seconds / 3600)} h`;
  if (seconds % 60 === 0) return `${formatNumber(seconds / 60)} min`;
  return `${formatNumber(seconds)} s`;
}

/** '600/min', '10/15 min', '10,000/calendar month (Europe/Berlin)'. */
export function shortRate(rate: MatrixRule['rate']): string {
  if (!rate) return '-';
  return `${formatNumber(rate.requests)}/${rate.periodText ?? periodText(rate.periodSeconds)}`;
}

function table(rows: string[][]): string[] {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows.map((r) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

const MATRIX_ROWS_SHOWN = 25;

/** The matrix as a few aligned lines: rule id, layer, rate, fail mode. */
export function matrixAtAGlance(design: Design): string[] {
  const rules = design.rules;
  const rows = [
    ['RULE', 'LAYER', 'RATE', 'FAIL MODE'],
    ...rules.slice(0, MATRIX_ROWS_SHOWN).map((r) => [printable(r.id, 60), r.layer ?? '-', shortRate(r.rate), r.failMode ?? '-']),
  ];
  const lines = table(rows);
  if (rules.length > MATRIX_ROWS_SHOWN) lines.push(`... and ${rules.length - MATRIX_ROWS_SHOWN} more rules in the document`);
  return lines;
}

/** 'auth closed; read, write open' from the resolved failure posture, for the classes in use. */
export function failModes(design: Design): string {
  const classes = [...new Set(design.scope.endpoints.map((e) => e.class))].filter((c) => c !== 'health');
  const byMode = { closed: [] as string[], open: [] as string[] };
  for (const c of classes) byMode[design.scope.failureByClass[c]].push(c);
  const parts = (['closed', 'open'] as const).filter((m) => byMode[m].length > 0).map((m) => `${byMode[m].join(', ')} fail ${m}`);
  return parts.join('; ') || 'none';
}

function headerLine(design: Design): string {
  const c = design.contract;
  const names = c.headers.map((h) => h.name).join(', ');
  const edge = (c.edgeRuleIds ?? []).length > 0 ? '; edge-only rules send Retry-After, no counts' : '';
  return `${conventionName(c.convention, true)}: ${names} on every response; Retry-After on every 429${c.silentRuleIds.length > 0 ? '; security rules answer without counts' : ''}${edge}`;
}

/**
 * How the ceiling is shared over the gateway nodes that each count on their own (nginx, Envoy's
 * local filter, Kong's local policy): the stated node count and what each ships, or the count
 * assumed when stack.gatewayNodes is not given. Undefined without such a ceiling.
 */
export function gatewayNodesLine(design: Design): string | undefined {
  const ceiling = design.rules.find(
    (r) => r.layer === 'edge' && r.identity === 'global' && (r.routes?.length ?? 0) === 0 && countedPerNode(r, design.scope),
  );
  if (!ceiling?.rate) return undefined;
  const { k, stated } = gatewayNodes(design.scope);
  const name = gatewayNodeName(design.scope.gateway);
  const fleet = fleetAdmission(design.scope, ceiling);
  return stated
    ? `${formatNumber(k)} ${name} node${k === 1 ? '' : 's'} (stack.gatewayNodes): ${fleet.text}`
    : `not given (stack.gatewayNodes), ${formatNumber(k)} assumed, one per instance: each ${name} node ships the whole ceiling, ${rpsText(fleet.ceilingRps)}`;
}

/** A phrase for each document file: one file is the document; in a folder, the index and each section. */
export function documentFiles(files: readonly string[], format: string): SummaryFile[] {
  if (files.length === 1) return [{ path: files[0] as string, phrase: `the design document (${format})` }];
  return files.map((f) => {
    const base = f.split('/').pop() ?? f;
    if (/^(?:README\.md|index\.html?)$/i.test(base))
      return { path: f, phrase: `the design document, start here: contents and the limit matrix at a glance (${format}, linked folder)` };
    if (/\.css$/i.test(base)) return { path: f, phrase: 'the stylesheet every page shares' };
    const title = base
      .replace(/\.[a-z]+$/i, '')
      .replace(/^\d+-/, '')
      .replace(/-/g, ' ');
    return { path: f, phrase: `section: ${title}` };
  });
}

/**
 * Where the code folder holds the OpenAPI Overlay (codegen/openapi's OVERLAY_PATH; repeated here
 * so init's summary does not load the code generator, and a test keeps the two equal).
 */
export const SUMMARY_OVERLAY_PATH = 'openapi/rate-limits.overlay.yaml';

/** The adapter's framework as the summary names it (NestJS and the rest mount the Express one). */
const ADAPTER_NAMES: Readonly<Record<string, string>> = { fastify: 'Fastify', koa: 'Koa', hono: 'Hono' };

/**
 * The code folder, and the OpenAPI Overlay in it when one was written: the file a team that
 * publishes its API contract looks for. code: the paths written, as shown.
 */
export function codeFiles(codeDir: string, code: readonly string[], design: Design): SummaryFile[] {
  const files: SummaryFile[] = [
    {
      path: codeDir,
      phrase: `enforcement code: ${code.length} files (Lua scripts, ${ADAPTER_NAMES[design.scope.framework ?? ''] ?? 'Express'} middleware, gateway and alert config), listed in its README.md`,
    },
  ];
  const overlay = code.find((p) => p.replace(/\\/g, '/').endsWith(`/${SUMMARY_OVERLAY_PATH}`));
  if (overlay !== undefined) {
    files.push({
      path: overlay,
      phrase:
        "the OpenAPI Overlay of the API's own document: each limited operation's 429 (Retry-After) and rate-limit headers; apply it with an overlay tool, or run `rl-design generate --openapi-merged`",
    });
  }
  return files;
}

export interface SummaryFile {
  path: string;
  phrase: string;
}

/** The summary; with `columns`, each file's phrase wraps under the phrase column of the list. */
export function summaryLines(
  design: Design,
  files: SummaryFile[],
  constraints: { passed: number; total: number },
  notes: string[],
  columns?: number,
): string[] {
  const lines: string[] = [
    '',
    `Key decisions for ${printable(design.scope.projectName, 80)}${design.meta.generic ? ' (generic design: see the assumptions)' : ''}:`,
  ];
  lines.push(`  Limit matrix at a glance (${design.rules.length} rule${design.rules.length === 1 ? '' : 's'}):`);
  for (const l of matrixAtAGlance(design)) lines.push(`    ${l}`);
  const nodes = gatewayNodesLine(design);
  if (nodes) lines.push(`  Gateway nodes: ${nodes}`);
  lines.push(`  Fail modes: ${failModes(design)}`);
  lines.push(`  Headers: ${headerLine(design)}`);
  lines.push(`  Assumptions: ${design.assumptions.length} stated in the document`);
  if (design.migration && design.migration.items.length > 0) {
    const m = design.migration;
    const count = (v: string): number => m.items.filter((i) => i.verdict === v).length;
    const warned = [
      count('looser') ? `${count('looser')} looser` : '',
      count('tighter') ? `${count('tighter')} tighter` : '',
      count('uncovered') ? `${count('uncovered')} not replaced` : '',
      count('kept') ? `${count('kept')} kept` : '',
      m.shadowedLocations.length ? `${m.shadowedLocations.length} nginx location(s) hiding the edge rules` : '',
    ].filter(Boolean);
    lines.push(
      `  Existing limiters: ${new Set(m.items.map((i) => i.existing)).size} set beside their replacements, route by route (${warned.join(', ') || 'all the same'}): see the migration part of the rollout`,
    );
  }
  lines.push(
    `  Constraints: ${constraints.passed} of ${constraints.total} pass${constraints.passed < constraints.total ? ' (run `rl-design validate` for details)' : ''}`,
  );
  lines.push('', 'Files:');
  const width = Math.max(...files.map((f) => f.path.length));
  // The phrases wrap under their own column while it leaves room for them, else under the path.
  const phraseColumn = columns !== undefined && columns - (width + 4) >= 30 ? width + 4 : 6;
  for (const f of files) lines.push(...wrapLine(`  ${f.path.padEnd(width)}  ${f.phrase}`, columns, phraseColumn));
  for (const n of notes) lines.push('', n);
  return lines;
}
