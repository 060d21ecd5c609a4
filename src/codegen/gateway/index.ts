/** Gateway configuration for the design's edge rules: one generator per gateway. */
import type { Design, Gateway } from '../../design/model.js';
import type { CodeFile } from '../types.js';
import {
  awsEdgeRefusals,
  awsRetryAfterFindings,
  cloudflareEdgeRefusals,
  cloudflareRetryAfterFindings,
  generateAws,
  generateCloudflare,
} from './cloud.js';
import { envoyEdgeRefusals, envoyRetryAfterFindings, generateEnvoy } from './envoy.js';
import { hasEdgeRules, type EdgeRefusal, type RetryAfterFinding } from './edge.js';
import { generateKong, kongEdgeRefusals, kongRetryAfterFindings } from './kong.js';
import { generateNginx, nginxEdgeRefusals, nginxRetryAfterFindings, type NginxDirectiveInForce, type NginxLimitInForce } from './nginx.js';

export type { EdgeRefusal, RefusalHeader } from './edge.js';

/** Each gateway's generator, and the 429s its files answer for the edge rules (read from the same values). */
const GATEWAYS: Readonly<
  Record<Exclude<Gateway, 'none'>, { generate: (design: Design) => CodeFile[]; refusals: (design: Design) => EdgeRefusal[] }>
> = {
  nginx: { generate: generateNginx, refusals: nginxEdgeRefusals },
  envoy: { generate: generateEnvoy, refusals: envoyEdgeRefusals },
  kong: { generate: generateKong, refusals: kongEdgeRefusals },
  'aws-api-gateway': { generate: generateAws, refusals: awsEdgeRefusals },
  cloudflare: { generate: generateCloudflare, refusals: cloudflareEdgeRefusals },
};

export const GATEWAY_GENERATORS = Object.fromEntries(Object.entries(GATEWAYS).map(([name, g]) => [name, g.generate])) as Readonly<
  Record<Exclude<Gateway, 'none'>, (design: Design) => CodeFile[]>
>;

/**
 * Config for one gateway (the design's own by default). Empty when the gateway is `none` or
 * when no rule is placed at the edge.
 */
export function generateGateway(design: Design, gateway: Gateway = design.scope.gateway): CodeFile[] {
  if (gateway === 'none' || !hasEdgeRules(design)) return [];
  return GATEWAY_GENERATORS[gateway](design);
}

/**
 * The 429s the design's gateway file answers for its edge rules, one per distinct shape, as the
 * generator writes them (empty when no gateway enforces a rule).
 */
export function gatewayEdgeRefusals(design: Design, gateway: Gateway = design.scope.gateway): EdgeRefusal[] {
  if (gateway === 'none' || !hasEdgeRules(design)) return [];
  return GATEWAYS[gateway].refusals(design);
}

/**
 * Every layer of the generated gateway files that can answer 429 without Retry-After, or with one
 * shorter than a limit answering through it needs (each gateway's check reads only its own files,
 * so any mix of files may be passed).
 */
export function gatewayRetryAfterFindings(
  files: CodeFile[],
  nginxInForce: readonly NginxDirectiveInForce[] = [],
  nginxLimits: readonly NginxLimitInForce[] = [],
): RetryAfterFinding[] {
  return [
    ...nginxRetryAfterFindings(files, nginxInForce, nginxLimits),
    ...envoyRetryAfterFindings(files),
    ...kongRetryAfterFindings(files),
    ...awsRetryAfterFindings(files),
    ...cloudflareRetryAfterFindings(files),
  ];
}
