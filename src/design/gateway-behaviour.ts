/**
 * What each gateway's generated configuration does with the edge rules, stated once: how a rule
 * is switched off, how the rules run during the shadow step, what body a refusal carries, and
 * where Kong keeps a rule's counters.
 * The rollout and the response contract say it to the reader; the gateway files quote it.
 */
import type { Algorithm, EndpointClass, FailMode, Gateway, MatrixRule, Scope } from './model.js';

/**
 * Where Kong's rate-limiting plugin keeps an edge rule's counters (its `policy`): the global
 * ceiling in each node's memory (local), a per-caller rule in the limiter's Redis when the
 * design has a store (redis), else in each node too.
 */
export function kongPolicy(rule: Pick<MatrixRule, 'identity'>, scope: Pick<Scope, 'store'>): 'local' | 'redis' {
  return rule.identity === 'global' || scope.store === 'none' ? 'local' : 'redis';
}

/** What turning an edge rule off takes on its gateway. */
export function edgeKillSwitchHow(rule: Pick<MatrixRule, 'id' | 'identity'>, gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'comment out its limit_req line in gateway/nginx-server.conf and reload nginx (a reload, no application deploy)';
    case 'envoy':
      return envoyCounter(rule) === 'local'
        ? 'set the runtime key ratelimit.edge_local.enabled to 0 (a runtime change: no reload, no application deploy); it switches off the local rate limit filter, which counts every edge rule of no identity'
        : `remove its rate_limits entries (descriptor rl_rule=${rule.id}) from the Envoy configuration and push it (xDS or a reload; no application deploy)`;
    case 'kong':
      return "set its plugin's enabled to false and apply the configuration (no application deploy)";
    case 'cloudflare':
      return "set its rule's enabled to false (a Rulesets API update, no application deploy)";
    case 'aws-api-gateway':
      return rule.identity === 'ip'
        ? "set its WAF rule's action to Count (counts, refuses nothing) and deploy the template (no application deploy)"
        : 'remove its throttle from the stage method settings or usage plan and deploy the template (no application deploy)';
    default:
      return `remove it from the ${gateway} configuration and apply it (a gateway change, no application deploy)`;
  }
}

/** How the edge rules run during the shadow step (`middleware`: while the middleware rules are in shadow mode beside them). */
export function edgeShadowHow(gateway: Gateway, middleware = true): string {
  switch (gateway) {
    case 'nginx':
      return 'the generated nginx configuration runs them with limit_req_dry_run on, which counts and logs the would-be refusals and refuses none; set it to off to enforce them';
    case 'envoy':
      return 'the generated Envoy configuration counts them without refusing (the local filter enforced at 0% under the runtime key ratelimit.edge_local.enforced, the rate limit service in shadow_mode); raise the key to 100 and remove shadow_mode to enforce them';
    case 'kong':
      return middleware
        ? "Kong's rate limit plugins have no report-only mode: deploy the generated kong.yaml with each rule's plugin enabled: false until this step is over, or keep the edge rules on while the middleware rules run in shadow (they are coarse and protect capacity)"
        : "Kong's rate limit plugins have no report-only mode, so there is no shadow step at the edge: deploy the generated kong.yaml with each rule's plugin enabled: false (nothing is counted) until this step is over, or enforce the rules from the start (they are coarse and protect capacity)";
    case 'cloudflare':
      return 'set each rule\'s action to "log" (Enterprise plans) or its enabled to false until this step is over; the generated rules block';
    case 'aws-api-gateway':
      return "set the WAF rules' action to Count until this step is over; stage and usage-plan throttles have no report-only mode, so keep their current values (or none) until then";
    default:
      return 'leave them out of the gateway configuration until this step is over';
  }
}

/** What the body of the gateway's 429 for an edge rule is ("its body is ..."). */
export function edgeRefusalBody(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
    case 'envoy':
      return 'problem+json (application/problem+json)';
    case 'kong':
      return 'Kong\'s own JSON ({"message": ...}), not problem+json';
    case 'cloudflare':
    case 'aws-api-gateway':
      return 'JSON in the problem+json shape, served as application/json (the gateway offers no other JSON type)';
    default:
      return "the gateway's own";
  }
}

/**
 * How a gateway counts one edge rule: the algorithm its limiter runs, the component, whether the
 * rule has a burst, and where the count lives. `shared` is one count for every gateway node (a
 * service or a store they all ask); otherwise each node counts on its own. `unreachable` says
 * what the rule does while the thing that keeps its shared count cannot be reached (absent: the
 * count is in the node itself and nothing can be unreachable).
 */
export interface EdgeCounter {
  algorithm: Algorithm;
  component: string;
  hasBurst: boolean;
  shared: boolean;
  /** How the rule's key is formed, in the gateway's own terms. */
  key: string;
  /** Where the count lives, for "its counter lives ..." sentences. */
  where: string;
  /** The count lives in the design's own store (Kong's policy redis). */
  inDesignStore?: boolean;
  unreachable?: {
    mode: FailMode;
    text: string;
    /** Why the answers' per-class fail modes are not applied, and the one switch that would fail every route the other way. */
    whyNotPerClass: string;
    flip: string;
  };
  /** The shared count's key expires with its window (envoyproxy/ratelimit sets the key's expiry to the unit). */
  keyLivesForWindow?: boolean;
}

/**
 * Where Envoy counts an edge rule: a global-identity rule (the ceiling, or a route-scoped one)
 * in each node's local rate limit filter, a per-client rule in the global rate limit service
 * (envoyproxy/ratelimit), whose fixed windows in its own Redis every Envoy node shares.
 */
export function envoyCounter(rule: Pick<MatrixRule, 'identity'>): 'local' | 'service' {
  return rule.identity === 'global' || rule.identity === undefined ? 'local' : 'service';
}

/** stat_prefix of the generated Envoy local rate limit filter (its stats carry it as a Prometheus label). */
export const ENVOY_LOCAL_STAT_PREFIX = 'rl_edge_local';

/** The Envoy cluster the generated routes send the application's requests to (the rate limit filter's stats carry it). */
export const ENVOY_APP_CLUSTER = 'app';

/**
 * Whether Envoy's rate limit filter refuses requests while the rate limit service is unreachable
 * (failure_mode_deny). It is one setting of the filter, for every route it covers, so the
 * generated configuration lets requests through: the per-class fail modes of the answers cannot
 * be honoured route by route there.
 */
export const ENVOY_FAILURE_MODE_DENY = false;

/** How the design's gateway counts one edge rule (the matrix states it, codegen and the worst case follow it). */
export function edgeCounter(rule: Pick<MatrixRule, 'identity'>, scope: Pick<Scope, 'gateway' | 'store'>): EdgeCounter {
  const perNode = (where: string) => ({ shared: false, where });
  switch (scope.gateway) {
    case 'nginx':
      return {
        algorithm: 'leaky-bucket',
        component: 'nginx limit_req',
        hasBurst: true,
        key:
          rule.identity === 'global' ? 'nginx:global (one counter per nginx node)' : 'nginx:client-ip ($binary_remote_addr after real-IP)',
        ...perNode('in each nginx node (its limit_req zone)'),
      };
    case 'envoy':
      if (envoyCounter(rule) === 'local') {
        return {
          algorithm: 'token-bucket',
          component: 'Envoy local rate limit filter',
          hasBurst: true,
          key: 'envoy:global (one token bucket per Envoy node)',
          ...perNode('in each Envoy node (its local rate limit filter)'),
        };
      }
      return {
        algorithm: 'fixed-window',
        component: 'Envoy global rate limit filter and the rate limit service (envoyproxy/ratelimit)',
        hasBurst: false,
        shared: true,
        key: `envoy ratelimit service: descriptor rl_rule=<rule id>, ${rule.identity === 'ip' ? 'remote_address (the client IP)' : 'the API key header'}`,
        where: "in the rate limit service's own Redis (not the design's store), one count that every Envoy node shares",
        keyLivesForWindow: true,
        unreachable: {
          mode: ENVOY_FAILURE_MODE_DENY ? 'closed' : 'open',
          text: `while the rate limit service is unreachable Envoy ${ENVOY_FAILURE_MODE_DENY ? 'refuses every request it covers' : 'lets every request through uncounted'} (failure_mode_deny ${ENVOY_FAILURE_MODE_DENY})`,
          whyNotPerClass: "Envoy's failure_mode_deny is one setting of the rate limit filter, not of a route",
          flip: `failure_mode_deny ${!ENVOY_FAILURE_MODE_DENY} in gateway/envoy-local-ratelimit.yaml`,
        },
      };
    case 'kong': {
      const redis = kongPolicy(rule, scope) === 'redis';
      return {
        algorithm: 'fixed-window',
        component: 'Kong rate limit plugins',
        hasBurst: false,
        key: rule.identity === 'global' ? 'kong:global (limit_by service)' : 'kong:client-ip (limit_by ip)',
        ...(redis
          ? {
              shared: true,
              where: "in the design's store (Kong's policy redis), one count that every Kong node shares",
              inDesignStore: true,
              unreachable: {
                mode: 'open' as const,
                text: "while Redis is unreachable Kong's plugin lets requests through (fault_tolerant true)",
                whyNotPerClass: 'the edge rule covers every class with one fault_tolerant setting',
                flip: 'fault_tolerant false on its plugins in gateway/kong.yaml',
              },
            }
          : perNode('in each Kong node (policy local)')),
      };
    }
    case 'aws-api-gateway':
      return {
        algorithm: 'token-bucket',
        component: 'AWS API Gateway throttling',
        hasBurst: true,
        shared: true,
        key: rule.identity === 'global' ? 'aws:stage throttle' : 'aws:WAF rate-based rule per client IP',
        where: "in AWS's own fleet-wide counters",
      };
    case 'cloudflare':
      return {
        algorithm: 'sliding-window-counter',
        component: 'Cloudflare rate limiting rule',
        hasBurst: false,
        shared: true,
        key: rule.identity === 'global' ? 'cloudflare:rule (counted per data centre)' : 'cloudflare:ip.src (counted per data centre)',
        where: "in Cloudflare's counters, per data centre",
      };
    default:
      return { algorithm: 'fixed-window', component: 'the gateway', hasBurst: false, key: 'gateway', ...perNode('in the gateway') };
  }
}

/**
 * Where an edge rule's count lives and what a failure there does: a count in each node has nothing
 * to lose; a shared one fails as the gateway's setting says, for every class alike, so the classes
 * the answers want to fail the other way are named when the gateway does not honour them.
 */
export function edgeStateNote(edge: EdgeCounter, scope: Pick<Scope, 'failureByClass'>, classes: readonly EndpointClass[]): string {
  if (!edge.unreachable) return `It keeps its counters ${edge.where}, so a store outage does not touch it.`;
  const mode = edge.unreachable.mode;
  const other = [...new Set(classes)].filter((c) => scope.failureByClass[c] !== undefined && scope.failureByClass[c] !== mode);
  const unmet =
    other.length > 0
      ? ` The answers ask ${other.join(' and ')} to fail ${mode === 'open' ? 'closed' : 'open'}: the generated configuration does not honour that, because ${edge.unreachable.whyNotPerClass}. To fail ${mode === 'open' ? 'closed' : 'open'}, set ${edge.unreachable.flip} (for every route the rule covers, whatever its class), or enforce ${other.length > 1 ? 'those classes' : 'that class'} in the middleware.`
      : '';
  return `It keeps its count ${edge.where}; ${edge.unreachable.text}.${unmet}`;
}

/** Where the edge rules' would-be refusals show during the shadow step, in Prometheus or the gateway's own reports. */
export function edgeShadowSignal(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'ratelimit_throttled_total{mode="shadow"} from monitoring/nginx-ratelimit.mtail (limit_req_dry_run logs each would-be refusal)';
    case 'envoy':
      return `envoy_http_local_rate_limit_rate_limited{envoy_local_http_ratelimit_prefix="${ENVOY_LOCAL_STAT_PREFIX}"} for the local filter and the rate limit service's ratelimit_service_rate_limit_shadow_mode for the rules it counts`;
    case 'kong':
      return 'Kong\'s 429 responses (kong_http_requests_total{code="429"} where its Prometheus plugin runs) once a rule is enabled';
    case 'cloudflare':
      return "the rules' log actions in Cloudflare's Security Events";
    case 'aws-api-gateway':
      return "the WAF rules' CountedRequests in CloudWatch";
    default:
      return "the gateway's own logs";
  }
}

/** How to let a legitimate offender through the edge rules: the gateway's configuration, not the answers' access lists (which the middleware applies). */
export function edgeAllowlistHow(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return "map the offender's trusted address to an empty key in nginx, which limit_req does not count";
    case 'envoy':
      return 'give the offender a route of its own ahead of the catch-all that skips the rate limits, as the generated exempt routes do, matched on a header your own proxy sets or on the trusted address';
    case 'kong':
      return 'give its traffic a Kong route of its own without the rate limit plugins, matched on a header your own proxy sets';
    case 'cloudflare':
      return "add a skip rule for the offender's addresses ahead of the rate limiting rules";
    case 'aws-api-gateway':
      return "add an allow rule for a WAF IP set of the offender's addresses ahead of the rate-based rules; stage and usage-plan throttles cannot exempt an address";
    default:
      return 'exempt the offender in the gateway configuration';
  }
}
