/**
 * Prometheus alerting rules for the design's monitoring section: one group, one rule per
 * alert, with the design's PromQL, hold time, severity label, and a summary (the condition)
 * and description (why it matters) as annotations. Written with the `yaml` package, so every
 * string is a correctly quoted scalar; annotations are Go templates, so `{{` is neutralised.
 */
import type { AlertSpec, Design, MetricSource } from '../design/model.js';
import { runsOnNode, slug } from '../design/naming.js';
import { TOOL_VERSION } from '../version.js';
import { promTemplateText, toYaml } from '../escape/index.js';
import { NGINX_HTTP_PATH, nginxZones } from './gateway/nginx.js';
import type { CodeFile } from './types.js';

export const ALERTS_PATH = 'monitoring/ratelimit-alerts.yaml';
export const NGINX_MTAIL_PATH = 'monitoring/nginx-ratelimit.mtail';

/** Prometheus durations: 30s, 10m, 1h, 1h30m ... */
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;

/** Alert names must be valid metric-style names. */
function alertName(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
}

/**
 * The name each alert of the document's table has in the rules file, in order: a valid
 * metric-style name, made unique with _2, _3... (constraint 5 finds the table's alerts in the
 * file by these names).
 */
export function alertRuleNames(alerts: readonly Pick<AlertSpec, 'name'>[]): string[] {
  const used = new Set<string>();
  return alerts.map((a) => {
    let name = alertName(String(a.name));
    const base = name;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  });
}

/** The rule's `for` in the file: the table's hold time when it is a Prometheus duration, else none. */
export function alertRuleFor(value: unknown): string | undefined {
  return typeof value === 'string' && DURATION.test(value) ? value : undefined;
}

/** The rules file as data. */
function alertRules(design: Design): { groups: Record<string, unknown>[] } {
  const names = alertRuleNames(design.monitoring.alerts);
  const rules = design.monitoring.alerts.map((a, i) => {
    const hold = alertRuleFor(a.for);
    return {
      alert: names[i],
      expr: a.expr,
      ...(hold !== undefined ? { for: hold } : {}),
      labels: { severity: a.severity, component: 'ratelimit' },
      annotations: {
        summary: promTemplateText(`${a.metric}: ${a.condition}`),
        description: promTemplateText(a.why),
      },
    };
  });
  return { groups: [{ name: `${slug(design.scope.projectName)}-ratelimit`, rules }] };
}

/** Where each metric source comes from, for the rules file's header. */
function sourceLines(design: Design): string[] {
  const by = new Map<MetricSource, string[]>();
  for (const m of design.monitoring.metrics) {
    for (const s of m.emittedBy ?? ['middleware']) by.set(s, [...(by.get(s) ?? []), m.name]);
  }
  const lines: string[] = ['', 'Where the metrics come from (an alert on a metric nobody exports never fires):'];
  const list = (s: MetricSource): string => (by.get(s) ?? []).join(', ');
  // off Node.js the generated TypeScript runs nowhere: the application's port emits these series
  const port = runsOnNode(design.scope.language) ? undefined : design.scope.language;
  if (by.has('middleware')) {
    lines.push(
      port === undefined
        ? `- the generated middleware (its prom-client registry): ${list('middleware')}`
        : `- the ${port} port of the generated middleware, under these names (README.md lists them with their labels): ${list('middleware')}`,
    );
  }
  if (by.has('outbound-client')) {
    lines.push(
      port === undefined
        ? `- the generated outbound client, with onEvent: outboundMetrics(promClient): ${list('outbound-client')}`
        : `- the ${port} port of the generated outbound client, under these names: ${list('outbound-client')}`,
    );
  }
  if (by.has('nginx-log')) {
    lines.push(
      `- ${NGINX_MTAIL_PATH} (mtail over nginx's error log, port 3903) for the edge rules ${(design.monitoring.edge?.ruleIds ?? []).join(', ')}: ${list('nginx-log')}`,
    );
  }
  if (by.has('redis-exporter')) {
    lines.push(
      `- oliver006/redis_exporter on every node of the limiter store, scraped as job "${design.monitoring.store.exporter?.job ?? 'ratelimit-redis'}": ${list('redis-exporter')}`,
    );
  }
  if (design.monitoring.edge?.countedBy === 'gateway') lines.push('', ...wrap(design.monitoring.edge.text));
  return lines;
}

/** Comment text in lines of at most ~100 characters. */
function wrap(text: string, width = 96): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out;
}

export function generateAlerts(design: Design): CodeFile {
  return {
    path: ALERTS_PATH,
    language: 'yaml',
    content: toYaml(alertRules(design), [
      `Generated by rl-design ${TOOL_VERSION} for ${design.scope.projectName}: Prometheus alerting rules.`,
      'Regenerate from the answers file rather than editing by hand. Load it from rule_files in',
      'prometheus.yml and check it with: promtool check rules ratelimit-alerts.yaml',
      "severity=page goes to the on-call rota; severity=ticket to the owning team's queue.",
      ...sourceLines(design),
    ]),
    description: "Prometheus alerting rules, one per row of the document's alerts table",
  };
}

/** A rule id as an mtail string literal, or null when it cannot be one safely. */
function mtailString(value: string): string | null {
  return /[\\\u0000-\u001f\u007f]/.test(value) ? null : `"${value.replace(/"/g, '\\"')}"`;
}

/** One line of mtail comment: no line breaks. */
function mtailComment(text: string): string {
  return text.replace(/[\r\n\u2028\u2029]+/g, ' ');
}

/**
 * monitoring/nginx-ratelimit.mtail: ratelimit_throttled_total{rule, mode} for the nginx edge
 * rules, from the refusals nginx writes to its error log ("limiting requests[, dry run],
 * excess: N by zone "<zone>""), zone mapped back to rule. Only for designs whose edge is nginx.
 */
export function nginxLogMetrics(design: Design): string | null {
  if (design.monitoring.edge?.countedBy !== 'nginx-log') return null;
  const zones = nginxZones(design);
  if (zones.length === 0) return null;
  const lines = [
    `# ${mtailComment(`Generated by rl-design ${TOOL_VERSION} for ${design.scope.projectName}: the nginx edge rules' refusals as Prometheus counters.`)}`,
    '# Regenerate from the answers file rather than editing by hand.',
    '#',
    '# nginx has no limit_req counter of its own, but logs every refusal (at limit_req_log_level, warn in',
    `# ${NGINX_HTTP_PATH.replace('gateway/', '')}) with its zone, and in shadow mode (limit_req_dry_run on) the same with "dry run":`,
    '#   ... limiting requests, excess: 12.345 by zone "rl_x", client: ...',
    '#   ... limiting requests, dry run, excess: 12.345 by zone "rl_x", client: ...',
    '# This mtail program turns them into ratelimit_throttled_total{rule, mode}, the counter the',
    '# middleware exports, so the alert rules see the edge rules too. On every nginx node:',
    '#   mtail --progs /etc/mtail --logs /var/log/nginx/error.log    (metrics on :3903/metrics)',
    "# and scrape it. mtail exports a labelled series once it is first set: every rule's series are",
    '# set to 0 by the first line nginx logs (of any kind), so the first refusal after that is an increase.',
    '',
    'counter ratelimit_throttled_total by rule, mode',
    '',
  ];
  const init: string[] = [];
  const blocks: string[] = [];
  for (const { ruleId, zone } of zones) {
    const id = mtailString(ruleId);
    if (id === null) {
      blocks.push(
        `# ${mtailComment(`rule ${JSON.stringify(ruleId)} (zone ${zone}) is not counted: its id has characters an mtail string cannot hold.`)}`,
        '',
      );
      continue;
    }
    init.push(`  ratelimit_throttled_total[${id}]["enforce"] += 0`, `  ratelimit_throttled_total[${id}]["shadow"] += 0`);
    blocks.push(
      `# ${mtailComment(ruleId)}`,
      `/limiting requests, excess: [0-9.]+ by zone "${zone}"/ {`,
      `  ratelimit_throttled_total[${id}]["enforce"]++`,
      '}',
      `/limiting requests, dry run, excess: [0-9.]+ by zone "${zone}"/ {`,
      `  ratelimit_throttled_total[${id}]["shadow"]++`,
      '}',
      '',
    );
  }
  if (init.length > 0) lines.push('# every series at 0 from the first logged line on', '/^/ {', ...init, '}', '');
  return `${[...lines, ...blocks].join('\n').replace(/\n+$/, '')}\n`;
}

/** The mtail program for the nginx edge rules, when the design has them. */
export function generateEdgeLogMetrics(design: Design): CodeFile[] {
  const content = nginxLogMetrics(design);
  return content === null
    ? []
    : [
        {
          path: NGINX_MTAIL_PATH,
          language: 'text',
          content,
          description: "mtail program: ratelimit_throttled_total for the nginx edge rules, from the refusals in nginx's error log",
        },
      ];
}
