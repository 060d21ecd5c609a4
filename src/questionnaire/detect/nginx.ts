/**
 * nginx detector: `limit_req_zone` / `limit_req` (joined by zone, across files), trusted proxy
 * CIDRs from `set_real_ip_from`, and `real_ip_header`. Any nginx configuration also tells us
 * the gateway is nginx.
 *
 * Files looked at: *.conf (also *.conf.template, .tmpl, .j2, .erb, .in), *.nginx, and anything in
 * sites-available/, sites-enabled/ or conf.d/. One counts as nginx only when its path names nginx
 * or it uses nginx-only directives or blocks (so redis.conf, ntp.conf or supervisord.conf are ignored).
 */
import { Cidr } from '../../answers/schema.js';
import { basename, describeRate, isTestPath, listAll, toRate } from './shared.js';
import { FIELDS, type ExistingLimiter, type Fact, type NginxSetting, type ProjectFs, type Warn } from './types.js';

interface Directive {
  name: string;
  args: string[];
  line: number;
  block?: Directive[];
}

interface NginxParse {
  directives: Directive[];
  errors: string[];
}

/** Tokenises and parses nginx configuration into nested directives. Best effort; never throws. */
export function parseNginx(text: string): NginxParse {
  const root: Directive[] = [];
  const stack: Directive[][] = [root];
  const errors: string[] = [];
  let words: string[] = [];
  let wordsLine = 1;
  let line = 1;
  let i = 0;
  const current = (): Directive[] => stack[stack.length - 1] as Directive[];
  const flush = (block?: Directive[]): void => {
    const [name, ...args] = words;
    if (name !== undefined) current().push({ name, args, line: wordsLine, ...(block ? { block } : {}) });
    else if (block) errors.push(`line ${line}: block without a directive`);
    words = [];
  };
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r') {
      i++;
    } else if (c === '#') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === ';') {
      flush();
      i++;
    } else if (c === '{') {
      const block: Directive[] = [];
      flush(block);
      stack.push(block);
      i++;
    } else if (c === '}') {
      if (words.length) errors.push(`line ${line}: missing ";" before "}"`);
      flush();
      if (stack.length > 1) stack.pop();
      else errors.push(`line ${line}: unexpected "}"`);
      i++;
    } else {
      if (words.length === 0) wordsLine = line;
      let word = '';
      if (c === '"' || c === "'") {
        i++;
        while (i < text.length && text[i] !== c) {
          if (text[i] === '\\' && i + 1 < text.length) i++;
          if (text[i] === '\n') line++;
          word += text[i];
          i++;
        }
        i++;
      } else {
        while (i < text.length && !/[\s;{}#]/.test(text[i] as string)) {
          if (text[i] === '$' && text[i + 1] === '{') {
            const end = text.indexOf('}', i);
            const stop = end < 0 ? text.length : end + 1;
            word += text.slice(i, stop);
            i = stop;
          } else {
            word += text[i];
            i++;
          }
        }
      }
      words.push(word);
    }
  }
  if (words.length) errors.push(`line ${line}: missing ";" at end of file`);
  if (stack.length > 1) errors.push(`unclosed block at end of file`);
  return { directives: root, errors };
}

/** Directives that only nginx uses: one of them is enough to call a *.conf nginx configuration. */
const NGINX_DIRECTIVES = new Set([
  'server_name',
  'proxy_pass',
  'fastcgi_pass',
  'uwsgi_pass',
  'grpc_pass',
  'proxy_set_header',
  'limit_req_zone',
  'limit_req',
  'limit_conn_zone',
  'set_real_ip_from',
  'real_ip_header',
  'worker_processes',
  'location',
]);
/** Settings generated nginx also writes: reported so it can leave out what the scanned configuration has. */
const NGINX_SETTINGS = new Set([
  'real_ip_header',
  'real_ip_recursive',
  'set_real_ip_from',
  'limit_req_status',
  'limit_req_log_level',
  'limit_req_dry_run',
]);

/** Blocks nginx configurations are made of (as blocks: ntp.conf also has a `server` line). */
const NGINX_BLOCKS = new Set(['http', 'server', 'events', 'upstream', 'stream', 'location']);

function isCandidate(path: string): boolean {
  const name = basename(path);
  return (
    /\.conf(?:\.(?:template|tmpl|tpl|j2|erb|in))?$|\.nginx$/.test(name) ||
    /(?:^|\/)(?:sites-available|sites-enabled|conf\.d)\/[^/]+$/.test(path)
  );
}

interface Located {
  directive: Directive;
  ancestors: Directive[];
  file: string;
}

function collect(directives: readonly Directive[], file: string, out: Located[], ancestors: Directive[] = []): void {
  for (const d of directives) {
    out.push({ directive: d, ancestors, file });
    if (d.block) collect(d.block, file, out, [...ancestors, d]);
  }
}

function scopeOf(ancestors: readonly Directive[]): string {
  for (let i = ancestors.length - 1; i >= 0; i--) {
    const a = ancestors[i] as Directive;
    if (a.name === 'location') return `location ${a.args.join(' ')}`;
    if (a.name === 'server') {
      const serverName = a.block?.find((d) => d.name === 'server_name')?.args.join(' ');
      return serverName ? `server ${serverName}` : 'server';
    }
  }
  return ancestors.length ? (ancestors[ancestors.length - 1] as Directive).name : 'main';
}

function option(args: readonly string[], key: string): string | undefined {
  const found = args.find((a) => a.startsWith(`${key}=`));
  return found?.slice(key.length + 1);
}

interface Zone {
  name: string;
  size?: string;
  key: string;
  rate?: string;
  file: string;
  line: number;
}

/** '10r/s' -> 10 per second; '30r/m' -> 30 per minute. */
function parseNginxRate(rate: string | undefined): { limit: number; windowSeconds: number } | undefined {
  const m = /^(\d+(?:\.\d+)?)r\/([sm])$/.exec(rate ?? '');
  if (!m) return undefined;
  return { limit: Number(m[1]), windowSeconds: m[2] === 's' ? 1 : 60 };
}

export async function detect(fs: ProjectFs, warn: Warn = () => {}): Promise<Fact[]> {
  const files = (await listAll(fs)).filter((f) => isCandidate(f) && !isTestPath(f));
  const parsed: Array<{ file: string; located: Located[] }> = [];
  for (const file of files) {
    const text = await fs.read(file);
    if (text === undefined) continue;
    const named = /nginx/i.test(file);
    const { directives, errors } = parseNginx(text);
    const located: Located[] = [];
    collect(directives, file, located);
    const looksNginx =
      named || located.some((l) => NGINX_DIRECTIVES.has(l.directive.name) || (l.directive.block && NGINX_BLOCKS.has(l.directive.name)));
    if (!looksNginx) continue;
    if (errors.length) warn({ source: file, message: `nginx syntax: ${errors[0]}; read what could be parsed` });
    parsed.push({ file, located });
  }

  const zones = new Map<string, Zone>();
  for (const { located } of parsed) {
    for (const { directive: d, file } of located) {
      if (d.name !== 'limit_req_zone') continue;
      const [name, size] = (option(d.args, 'zone') ?? '').split(':');
      if (!name || zones.has(name)) continue;
      zones.set(name, { name, size, key: d.args[0] ?? '', rate: option(d.args, 'rate'), file, line: d.line });
    }
  }

  const facts: Fact[] = [];
  const usedZones = new Set<string>();
  for (const { file, located } of parsed) {
    const zoneNames = located
      .filter((l) => l.directive.name === 'limit_req_zone')
      .map((l) => option(l.directive.args, 'zone')?.split(':')[0]);
    facts.push({
      field: FIELDS.gateway,
      value: 'nginx',
      source: file,
      detail: zoneNames.length ? `nginx config with limit_req_zone ${zoneNames.join(', ')}` : 'nginx config',
    });

    for (const { directive: d, ancestors } of located) {
      if (d.name !== 'limit_req') continue;
      const zoneName = option(d.args, 'zone') ?? '';
      usedZones.add(zoneName);
      facts.push(limitFact(zones.get(zoneName), zoneName, d, ancestors, file));
    }

    const cidrs: string[] = [];
    const rejected: string[] = [];
    for (const { directive: d } of located) {
      if (d.name !== 'set_real_ip_from') continue;
      for (const arg of d.args) {
        if (Cidr.safeParse(arg).success) {
          if (!cidrs.includes(arg)) cidrs.push(arg);
        } else rejected.push(arg);
      }
    }
    if (cidrs.length) {
      facts.push({
        field: FIELDS.trustedProxies,
        value: cidrs,
        source: file,
        detail: `set_real_ip_from ${cidrs.join(', ')}${rejected.length ? ` (ignored: ${rejected.join(', ')})` : ''}`,
      });
    }

    for (const { directive: d, ancestors } of located) {
      if (!NGINX_SETTINGS.has(d.name)) continue;
      const parent = ancestors[ancestors.length - 1]?.name;
      const context: NginxSetting['context'] =
        parent === undefined ? 'main' : parent === 'http' || parent === 'server' || parent === 'location' ? parent : 'other';
      const value: NginxSetting = { name: d.name, value: d.args.join(' '), context, line: d.line };
      facts.push({
        field: FIELDS.nginxSetting,
        value,
        source: file,
        detail: `${d.name} ${d.args.join(' ')} in ${context} at line ${d.line}`,
      });
    }

    const header = located.find((l) => l.directive.name === 'real_ip_header');
    const recursive = located.find((l) => l.directive.name === 'real_ip_recursive');
    if (header?.directive.args[0]) {
      facts.push({
        field: FIELDS.realIpHeader,
        value: header.directive.args[0],
        source: file,
        detail:
          `real_ip_header ${header.directive.args[0]}` + (recursive ? `; real_ip_recursive ${recursive.directive.args.join(' ')}` : ''),
      });
    }
  }

  for (const zone of zones.values()) {
    if (usedZones.has(zone.name)) continue;
    const rate = parseNginxRate(zone.rate);
    const value: ExistingLimiter = {
      kind: 'nginx',
      name: zone.name,
      scope: 'unused (no limit_req refers to it)',
      key: zone.key,
      ...(rate ? { ...rate, rate: toRate(rate.limit, rate.windowSeconds) } : {}),
      settings: { zone: zone.name, ...(zone.size ? { zoneSize: zone.size } : {}), ...(zone.rate ? { rate: zone.rate } : {}) },
      line: zone.line,
    };
    facts.push({
      field: FIELDS.existingLimiters,
      value,
      source: zone.file,
      detail: `limit_req_zone ${zone.key} zone=${zone.name}${zone.size ? `:${zone.size}` : ''} rate=${zone.rate ?? '?'}, not used by any limit_req`,
    });
  }
  return facts;
}

function limitFact(zone: Zone | undefined, zoneName: string, d: Directive, ancestors: readonly Directive[], file: string): Fact {
  const burstText = option(d.args, 'burst');
  const burst = burstText !== undefined && /^\d+$/.test(burstText) ? Number(burstText) : undefined;
  const nodelay = d.args.includes('nodelay');
  const delay = option(d.args, 'delay');
  // The innermost limit_req_status in force: ancestors run outermost first.
  const status = ancestors
    .flatMap((a) => a.block ?? [])
    .filter((x) => x.name === 'limit_req_status')
    .map((x) => x.args[0])
    .pop();
  const rate = parseNginxRate(zone?.rate);
  const scope = scopeOf(ancestors);
  const value: ExistingLimiter = {
    kind: 'nginx',
    name: zoneName,
    scope,
    ...(zone ? { key: zone.key } : {}),
    ...(rate ? { ...rate, rate: toRate(rate.limit, rate.windowSeconds) } : {}),
    ...(burst !== undefined ? { burst } : {}),
    settings: {
      zone: zoneName,
      ...(zone?.size ? { zoneSize: zone.size } : {}),
      ...(zone?.rate ? { rate: zone.rate } : {}),
      ...(burst !== undefined ? { burst } : {}),
      ...(nodelay ? { nodelay: true } : {}),
      ...(delay !== undefined ? { delay } : {}),
      ...(status ? { status } : {}),
    },
    line: d.line,
  };
  const zoneText = zone
    ? `limit_req_zone ${zone.key} zone=${zone.name}${zone.size ? `:${zone.size}` : ''} rate=${zone.rate ?? '?'}${zone.file !== file ? ` (${zone.file})` : ''}; `
    : `zone ${zoneName} not defined; `;
  const rateText = rate ? ` = ${describeRate(toRate(rate.limit, rate.windowSeconds))}` : '';
  return {
    field: FIELDS.existingLimiters,
    value,
    source: file,
    detail: `${zoneText}limit_req ${d.args.join(' ')} in ${scope}${rateText}${burst !== undefined ? `, burst ${burst}` : ''}`,
  };
}
