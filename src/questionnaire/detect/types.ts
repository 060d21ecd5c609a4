/**
 * Types shared by the codebase detectors ("inspect before asking").
 *
 * Detectors never touch the disk themselves: they read the project through a
 * read-only ProjectFs port (src/io/project-fs.ts is the Node implementation,
 * ./memory-fs.ts an in-memory one for tests and dry runs). Each detector returns
 * Facts: one observation each, with the file it came from and a human detail.
 */
import type { ExistingLimiterT, Rate } from '../../answers/schema.js';

// The read-only project port lives with its Node implementation in io/.
export { DEFAULT_MAX_BYTES, SKIPPED_DIRS, type ProjectFs, type ReadOptions } from '../../io/project-fs.js';
import type { ProjectFs } from '../../io/project-fs.js';

/** One thing learned from the codebase. */
export interface Fact {
  /** The answers JSON path it informs (e.g. 'stack.framework'), or an informational field (see FIELDS). */
  field: string;
  value: unknown;
  /** The file it came from, relative to the project root. */
  source: string;
  /** How it was recognised, for people: e.g. 'express 5.1.0 in dependencies'. */
  detail: string;
}

/** A file that looked relevant but could not be understood. Detection goes on without it. */
export interface DetectWarning {
  source: string;
  message: string;
}

export type Warn = (warning: DetectWarning) => void;

/** A detector reads one kind of source. It must not throw for bad input: it warns and goes on. */
export interface Detector {
  id: string;
  detect(fs: ProjectFs, warn?: Warn): Promise<Fact[]>;
}

/** Every field a detector may report. The stack.*, endpoints, identities and openapi ones map onto the answers. */
export const FIELDS = {
  framework: 'stack.framework',
  language: 'stack.language',
  gateway: 'stack.gateway',
  store: 'stack.store',
  trustedProxies: 'stack.trustedProxies',
  endpoints: 'endpoints',
  identities: 'identities',
  /** The OpenAPI document of the API (value: { path }, relative to the project root). */
  openapi: 'openapi',
  /** Informational: a rate limit already enforced somewhere (value: ExistingLimiter). */
  existingLimiters: 'existingLimiters',
  /** Informational: the header a proxy takes the client IP from (value: string, e.g. 'X-Forwarded-For'). */
  realIpHeader: 'realIpHeader',
  /** A real-IP or limit_req setting of an nginx configuration (value: NginxSetting), which generated nginx must not repeat. */
  nginxSetting: 'nginxSetting',
} as const;

export type SettingValue = string | number | boolean | Array<string | number>;

/** The value of an 'nginxSetting' fact. */
export interface NginxSetting {
  name: string;
  value: string;
  /** The block it sits in: main, http, server, location or other. */
  context: 'main' | 'http' | 'server' | 'location' | 'other';
  line: number;
}

/** The value of an 'existingLimiters' fact: a limit the project already enforces. */
export interface ExistingLimiter {
  /**
   * What enforces it: an npm library ('express-rate-limit', 'rate-limiter-flexible', '@fastify/rate-limit', ...),
   * 'nginx', 'envoy-local', 'envoy-global', 'envoy-ratelimit-service', 'kong:rate-limiting' or
   * 'kong:rate-limiting-advanced'.
   */
  kind: string;
  /** Library version (lockfile version when known, else the declared range). */
  version?: string;
  /** Its name where it has one: the variable holding it, the nginx zone, the Envoy stat prefix. */
  name?: string;
  /** Where it applies: 'global', 'location /api/', 'route login', 'service orders', ... */
  scope?: string;
  /** What it is keyed on, as written: '$binary_remote_addr', 'consumer', 'remote_address', ... */
  key?: string;
  /** Requests admitted per window, and the window, when both are known. */
  limit?: number;
  windowSeconds?: number;
  /** The same limit as a rate per whole period (scaled to the smallest period that holds the window). */
  rate?: Rate;
  /** Extra requests admitted at once (bucket size / nginx burst), when stated. */
  burst?: number;
  /** How it counts, when the detector can tell beyond its kind (a hand-written Redis counter: fixed-window). */
  algorithm?: ExistingLimiterT['algorithm'];
  /** The literal settings as written in the file (numbers evaluated, durations left as written). */
  settings: Record<string, SettingValue>;
  /** Settings present but not literal (functions, stores, clients): names only. */
  otherOptions?: string[];
  /** 1-based line of the call or directive. */
  line?: number;
}
