/** Gateway configuration for the design's edge rules: one generator per gateway. */
import type { Design, Gateway } from '../../design/model.js';
import type { CodeFile } from '../types.js';
import { generateAws, generateCloudflare } from './cloud.js';
import { generateEnvoy } from './envoy.js';
import { hasEdgeRules } from './edge.js';
import { generateKong } from './kong.js';
import { generateNginx } from './nginx.js';

export { generateAws, generateCloudflare, generateEnvoy, generateKong, generateNginx };
export { edgeRules, hasEdgeRules } from './edge.js';

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
