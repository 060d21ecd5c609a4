/**
 * What each gateway's generated configuration does with the edge rules, stated once: how a rule
 * is switched off, how the rules run during the shadow step, what body a refusal carries, and
 * where Kong keeps a rule's counters.
 * The rollout and the response contract say it to the reader; the gateway files quote it.
 */
import type { Gateway, MatrixRule, Scope } from './model.js';

/**
 * Where Kong's rate-limiting plugin keeps an edge rule's counters (its `policy`): the global
 * ceiling in each node's memory (local), a per-caller rule in the limiter's Redis when the
 * design has a store (redis), else in each node too.
 */
export function kongPolicy(rule: Pick<MatrixRule, 'identity'>, scope: Pick<Scope, 'store'>): 'local' | 'redis' {
  return rule.identity === 'global' || scope.store === 'none' ? 'local' : 'redis';
}

/** What turning an edge rule off takes on its gateway. */
export function edgeKillSwitchHow(rule: Pick<MatrixRule, 'identity'>, gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'comment out its limit_req line in gateway/nginx-server.conf and reload nginx (a reload, no application deploy)';
    case 'envoy':
      return "remove it from the Envoy configuration (its descriptor and rate_limits entries; for the global ceiling, the local filter's token_bucket) and push it (xDS or a reload; no application deploy)";
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

/** How the edge rules run while the middleware rules are in shadow mode. */
export function edgeShadowHow(gateway: Gateway): string {
  switch (gateway) {
    case 'nginx':
      return 'the generated nginx configuration runs them with limit_req_dry_run on, which counts and logs the would-be refusals and refuses none; set it to off to enforce them';
    case 'envoy':
      return 'the generated Envoy configuration counts them without refusing (the local filter enforced at 0% under the runtime key ratelimit.edge_local.enforced, the rate limit service in shadow_mode); raise the key to 100 and remove shadow_mode to enforce them';
    case 'kong':
      return "Kong's rate limit plugins have no report-only mode: deploy the generated kong.yaml with each rule's plugin enabled: false until this step is over, or keep the edge rules on while the middleware rules run in shadow (they are coarse and protect capacity)";
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
