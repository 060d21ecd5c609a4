/** Gateway configuration for the design's edge rules: one generator per gateway. */
import type { Design, Gateway } from '../../design/model.js';
import type { CodeFile } from '../types.js';
import { awsRetryAfterFindings, cloudflareRetryAfterFindings, generateAws, generateCloudflare } from './cloud.js';
import { envoyRetryAfterFindings, generateEnvoy } from './envoy.js';
import { hasEdgeRules, type RetryAfterFinding } from './edge.js';
import { generateKong, kongRetryAfterFindings } from './kong.js';
import { generateNginx, nginxRetryAfterFindings } from './nginx.js';

export const GATEWAY_GENERATORS: Readonly<Record<Exclude<Gateway, 'none'>, (design: Design) => CodeFile[]>> = {
  nginx: generateNginx,
  envoy: generateEnvoy,
  kong: generateKong,
  'aws-api-gateway': generateAws,
  cloudflare: generateCloudflare,
};

/**
 * Config for one gateway (the design's own by default). Empty when the gateway is `none` or
 * when no rule is placed at the edge.
 */
export function generateGateway(design: Design, gateway: Gateway = design.scope.gateway): CodeFile[] {
  if (gateway === 'none' || !hasEdgeRules(design)) return [];
  return GATEWAY_GENERATORS[gateway](design);
}

/**
 * Every layer of the generated gateway files that can answer 429 without Retry-After (each
 * gateway's check reads only its own files, so any mix of files may be passed).
 */
export function gatewayRetryAfterFindings(files: CodeFile[]): RetryAfterFinding[] {
  return [
    ...nginxRetryAfterFindings(files),
    ...envoyRetryAfterFindings(files),
    ...kongRetryAfterFindings(files),
    ...awsRetryAfterFindings(files),
    ...cloudflareRetryAfterFindings(files),
  ];
}
