/**
 * "Inspect before asking": runs every detector over a project folder and collects what the
 * codebase already answers.
 *
 * Precedence (which fact wins when two report the same field): detectors run in the order of
 * DETECTORS (package.json, other languages' root manifests, OpenAPI, Kong, Envoy, nginx) and, within one detector, files are read
 * shallowest first, then alphabetically. So application manifests beat gateway configs for
 * stack.store, and for stack.gateway the configurations recognised most specifically
 * (Kong `_format_version`, Envoy filter names) beat nginx's, which is recognised heuristically
 * from *.conf files.
 * `facts` is in that order; `byField` keeps the first fact per field.
 *
 * Never throws: a file that cannot be understood becomes a warning naming it, and a detector
 * that fails outright becomes a warning naming the detector.
 */
import * as envoy from './envoy.js';
import * as kong from './kong.js';
import * as manifests from './manifests.js';
import * as nginx from './nginx.js';
import * as openapi from './openapi.js';
import * as packageJson from './package-json.js';
import { describeLimit, printable } from './shared.js';
import { FIELDS } from './types.js';
import type { DetectWarning, Detector, ExistingLimiter, Fact, ProjectFs, ReadOptions } from './types.js';

export type { Fact, ProjectFs } from './types.js';
export { factsToAnswers } from './to-answers.js';
export { classifyRoute, withDetectedOpenApi } from './openapi.js';
export { projectName } from './manifests.js';
export { printable } from './shared.js';
export { memoryProjectFs } from './memory-fs.js';

/** In precedence order. */
export const DETECTORS: readonly Detector[] = [
  { id: 'package-json', detect: packageJson.detect },
  { id: 'manifests', detect: manifests.detect },
  { id: 'openapi', detect: openapi.detect },
  { id: 'kong', detect: kong.detect },
  { id: 'envoy', detect: envoy.detect },
  { id: 'nginx', detect: nginx.detect },
];

export interface ProjectDetection {
  /** Every fact, in precedence order. */
  facts: Fact[];
  /** The winning fact per field. */
  byField: Record<string, Fact>;
  /** One printable line per fact: 'framework: express (package.json: express 5.1.0 in dependencies)'. */
  summary: string[];
  /** Files that looked relevant but could not be read. */
  warnings: DetectWarning[];
}

export async function detectProject(fs: ProjectFs, detectors: readonly Detector[] = DETECTORS): Promise<ProjectDetection> {
  const cached = cachingFs(fs);
  const facts: Fact[] = [];
  const warnings: DetectWarning[] = [];
  const warn = (w: DetectWarning): void => {
    if (!warnings.some((x) => x.source === w.source && x.message === w.message)) warnings.push(w);
  };
  try {
    await cached.list('');
  } catch (e) {
    warn({ source: '.', message: `the project folder could not be listed: ${errorText(e)}` });
    return { facts, byField: {}, summary: [], warnings };
  }
  for (const detector of detectors) {
    try {
      facts.push(...(await detector.detect(cached, warn)));
    } catch (e) {
      warn({ source: `(${detector.id} detector)`, message: `stopped early: ${errorText(e)}` });
    }
  }
  const byField: Record<string, Fact> = {};
  for (const fact of facts) if (!Object.hasOwn(byField, fact.field)) byField[fact.field] = fact;
  // nginx settings only tell generated nginx what not to repeat; the real-IP header line says the rest
  return { facts, byField, summary: facts.filter((f) => f.field !== FIELDS.nginxSetting).map(formatFact), warnings };
}

function errorText(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).split('\n')[0] ?? '';
}

/** Text kept in memory across detectors at most; beyond it, files are read again when asked for. */
const CACHE_BUDGET_BYTES = 64 * 1024 * 1024;

/** Lists and reads each file once, whichever detectors ask (within a memory budget); read errors read as undefined. */
function cachingFs(fs: ProjectFs): ProjectFs {
  const lists = new Map<string, Promise<string[]>>();
  const reads = new Map<string, Promise<string | undefined>>();
  let cached = 0;
  return {
    list(dir) {
      let p = lists.get(dir);
      if (!p) {
        p = fs.list(dir);
        lists.set(dir, p);
      }
      return p;
    },
    read(path, options?: ReadOptions) {
      const key = `${path}\u0000${options?.maxBytes ?? ''}`;
      const hit = reads.get(key);
      if (hit) return hit;
      const p = fs.read(path, options).catch(() => undefined);
      reads.set(key, p);
      void p.then((text) => {
        cached += text?.length ?? 0;
        if (cached > CACHE_BUDGET_BYTES) {
          reads.delete(key);
          cached -= text?.length ?? 0;
        }
      });
      return p;
    },
  };
}

const LABELS: Record<string, string> = {
  'stack.framework': 'framework',
  'stack.language': 'language',
  'stack.gateway': 'gateway',
  'stack.store': 'store',
  'stack.trustedProxies': 'trusted proxies',
  endpoints: 'endpoints',
  identities: 'identities',
  openapi: 'OpenAPI document',
  existingLimiters: 'existing limiter',
  realIpHeader: 'client IP header',
  nginxSetting: 'nginx setting',
};

function formatValue(fact: Fact): string {
  const v = fact.value;
  if (fact.field === 'endpoints' && Array.isArray(v)) return `${v.length} endpoint${v.length === 1 ? '' : 's'}`;
  if (fact.field === 'existingLimiters' && typeof v === 'object' && v !== null) {
    const l = v as ExistingLimiter;
    return [l.kind, describeLimit(l.limit, l.windowSeconds, l.rate)].filter(Boolean).join(' ');
  }
  if (fact.field === 'nginxSetting' && typeof v === 'object' && v !== null) {
    const n = v as { name: string; value: string; context: string };
    return `${n.name} ${n.value} (${n.context})`;
  }
  if (fact.field === 'openapi' && typeof v === 'object' && v !== null) return String((v as { path: unknown }).path);
  if (Array.isArray(v)) return v.map(String).join(', ');
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** 'framework: express (package.json: express 5.1.0 in dependencies)' */
function formatFact(fact: Fact): string {
  const label = LABELS[fact.field] ?? fact.field;
  return printable(`${label}: ${formatValue(fact)} (${fact.source}: ${fact.detail})`);
}

/** 'warning: openapi.yaml: OpenAPI file is not valid YAML: ...' */
export function formatWarning(warning: DetectWarning): string {
  return printable(`warning: ${warning.source}: ${warning.message}`);
}
