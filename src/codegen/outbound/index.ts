/** Outbound limits: the generated client for third-party providers. */
import type { Design } from '../../design/model.js';
import type { CodeFile } from '../types.js';
import { generateOutboundClient } from './client.js';

export { outboundProviders } from './client.js';

/** The outbound client, when the design calls third-party providers. */
export function generateOutbound(design: Design): CodeFile[] {
  return (design.outbound?.providers.length ?? 0) > 0 ? generateOutboundClient(design) : [];
}
