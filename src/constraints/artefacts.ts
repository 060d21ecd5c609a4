/**
 * Reading the generated files, for the checks that concern what ships: the middleware's data
 * module (middleware/design.ts), the outbound client's providers, the alert rules and the
 * programs that emit metrics. Each reader works on the file's text as written, never on the
 * design the file was made from, so a file edited or generated wrong is seen as it is.
 * None of these throw: a file that cannot be read is reported as missing or unreadable.
 */
import { parse as parseYaml } from 'yaml';
import type { CodeFile } from '../codegen/types.js';
import type { DesignData } from '../runtime/middleware/types.js';

export const DESIGN_DATA_FILE = 'middleware/design.ts';
export const PROVIDERS_FILE = 'outbound/providers.ts';
const OUTBOUND_CLIENT_FILE = 'outbound/client.ts';
/** The runtime module that builds a refusal (its 429 and its headers). */
export const REFUSAL_FILE = 'middleware/evaluation.ts';
export const ALERTS_FILE = 'monitoring/ratelimit-alerts.yaml';

export function fileOf(files: readonly CodeFile[], path: string): CodeFile | undefined {
  return files.find((f) => f.path === path);
}

/** Identifier keys of an object literal written by the generator (one per line, or inline after `{ ` or `, `). */
const KEY = /(^\s*|\{\s|,\s)([A-Za-z_$][\w$]*): /gm;

/** A TypeScript literal of plain data, as tsValue writes it, to JSON text. */
function literalToJson(text: string): string {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('//'))
    .join('\n')
    .replace(KEY, (_, lead: string, key: string) => `${lead}"${key}": `)
    .replace(/,(\s*[}\]])/g, '$1');
}

/** DESIGN as middleware/design.ts holds it, or undefined when the file is missing or unreadable. */
export function shippedDesign(files: readonly CodeFile[]): DesignData | undefined {
  const content = fileOf(files, DESIGN_DATA_FILE)?.content;
  if (content === undefined) return undefined;
  const start = content.indexOf('export const DESIGN: DesignData = ');
  if (start < 0) return undefined;
  const literal = content.slice(start + 'export const DESIGN: DesignData = '.length).replace(/;\s*$/, '');
  try {
    return JSON.parse(literalToJson(literal)) as DesignData;
  } catch {
    return undefined;
  }
}

/** A provider of outbound/providers.ts. */
interface ShippedProvider {
  name: string;
  ruleId: string;
  key: string;
  shared: boolean;
  killSwitchFlag?: string;
}

/** The providers outbound/providers.ts holds (empty when the file is missing or unreadable). */
export function shippedProviders(files: readonly CodeFile[]): ShippedProvider[] {
  const content = fileOf(files, PROVIDERS_FILE)?.content ?? '';
  const out: ShippedProvider[] = [];
  for (const m of content.matchAll(/^ {2}\[("(?:[^"\\]|\\.)*")\]: (\{.*\}),$/gm)) {
    try {
      out.push(JSON.parse(literalToJson(m[2] as string)) as ShippedProvider);
    } catch {
      // an unreadable entry counts as absent
    }
  }
  return out;
}

/** PromQL words that are not metric names. */
const PROMQL_WORDS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'count',
  'stddev',
  'stdvar',
  'topk',
  'bottomk',
  'quantile',
  'count_values',
  'group',
  'rate',
  'irate',
  'increase',
  'delta',
  'idelta',
  'deriv',
  'histogram_quantile',
  'abs',
  'absent',
  'absent_over_time',
  'ceil',
  'floor',
  'round',
  'clamp_min',
  'clamp_max',
  'time',
  'vector',
  'scalar',
  'label_replace',
  'sort',
  'sort_desc',
  'avg_over_time',
  'max_over_time',
  'min_over_time',
  'sum_over_time',
  'count_over_time',
  'changes',
  'resets',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'and',
  'or',
  'unless',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/** The metric names a PromQL expression reads (label matchers, groupings and durations set aside). */
export function metricsOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+\w+/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[A-Za-z_:][\w:]*/g)) {
    const word = m[0];
    if (PROMQL_WORDS.has(word.toLowerCase())) continue;
    // a word followed by "(" is a function
    const after = bare.slice((m.index ?? 0) + word.length).trimStart();
    if (after.startsWith('(')) continue;
    names.add(word);
  }
  return [...names];
}

/** An alerting rule of the shipped rules file, as Prometheus reads it. */
export interface ShippedAlert {
  alert: string;
  expr: string;
  for: string | undefined;
  severity: unknown;
}

/** The alerting rules of the shipped rules file (none when it is missing or not YAML). */
export function shippedAlerts(files: readonly CodeFile[]): ShippedAlert[] {
  const content = fileOf(files, ALERTS_FILE)?.content;
  if (content === undefined) return [];
  let doc: unknown;
  try {
    doc = parseYaml(content);
  } catch {
    return [];
  }
  const out: ShippedAlert[] = [];
  const groups = (doc as { groups?: unknown })?.groups;
  for (const group of Array.isArray(groups) ? groups : []) {
    const rules = (group as { rules?: unknown })?.rules;
    for (const rule of Array.isArray(rules) ? rules : []) {
      const r = rule as { alert?: unknown; expr?: unknown; for?: unknown; labels?: { severity?: unknown } };
      if (typeof r.alert === 'string' && typeof r.expr === 'string')
        out.push({ alert: r.alert, expr: r.expr, for: typeof r.for === 'string' ? r.for : undefined, severity: r.labels?.severity });
    }
  }
  return out;
}

/** Each alert of the rules file with the metrics its expression reads. */
export function alertMetrics(files: readonly CodeFile[]): { alert: string; metrics: string[] }[] {
  return shippedAlerts(files).map((r) => ({ alert: r.alert, metrics: metricsOf(r.expr) }));
}

/** Histogram and summary series are exported under the metric's name plus these suffixes. */
function withSeries(name: string): string[] {
  return [name, `${name}_bucket`, `${name}_sum`, `${name}_count`];
}

/**
 * The metrics the generated components export, by file: the middleware (the names in
 * design.ts that metrics.ts registers, each by its key), the outbound client (its OUTBOUND_METRIC_NAMES, when the
 * design has providers), and the mtail programs (their `counter` declarations).
 */
export function emittedMetrics(files: readonly CodeFile[]): Map<string, string> {
  const emitted = new Map<string, string>();
  const add = (name: string, file: string): void => {
    for (const n of withSeries(name)) if (!emitted.has(n)) emitted.set(n, file);
  };
  const design = shippedDesign(files);
  // the metrics of design.ts that metrics.ts registers: counterFor(registry, METRICS.<key>, ...) or latencyFor(registry, METRICS.<key>)
  const source = fileOf(files, 'middleware/metrics.ts')?.content ?? '';
  const registered = new Set([...source.matchAll(/(?:counterFor|latencyFor)\(\s*registry,\s*METRICS\.(\w+)/g)].map((m) => m[1] as string));
  if (design) {
    for (const [key, spec] of Object.entries(design.metrics ?? {})) {
      if (registered.has(key) && spec && typeof spec.name === 'string') add(spec.name, DESIGN_DATA_FILE);
    }
  }
  const client = fileOf(files, OUTBOUND_CLIENT_FILE)?.content;
  if (client !== undefined && fileOf(files, PROVIDERS_FILE) !== undefined) {
    const block = /OUTBOUND_METRIC_NAMES = \{([^}]*)\}/.exec(client)?.[1] ?? '';
    for (const m of block.matchAll(/'([a-z_:][a-z0-9_:]*)'/g)) add(m[1] as string, OUTBOUND_CLIENT_FILE);
  }
  for (const f of files.filter((x) => x.path.endsWith('.mtail'))) {
    for (const m of f.content.matchAll(/^(?:counter|gauge|histogram)\s+([a-zA-Z_:][\w:]*)/gm)) add(m[1] as string, f.path);
  }
  return emitted;
}

/** The Lua files shipped, by file name. */
export function shippedLua(files: readonly CodeFile[]): Map<string, string> {
  return new Map(files.filter((f) => f.path.startsWith('lua/')).map((f) => [f.path.slice('lua/'.length), f.content]));
}
