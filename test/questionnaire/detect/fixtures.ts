import { fileURLToPath } from 'node:url';
import { nodeProjectFs } from '../../../src/io/project-fs.js';
import type { DetectWarning, ProjectFs } from '../../../src/questionnaire/detect/types.js';

/** test/fixtures/projects/, with a trailing separator. */
export const FIXTURES = fileURLToPath(new URL('../../fixtures/projects/', import.meta.url));

export function fixture(name: string): ProjectFs {
  return nodeProjectFs(FIXTURES + name);
}

export function warnings(): { list: DetectWarning[]; warn: (w: DetectWarning) => void } {
  const list: DetectWarning[] = [];
  return { list, warn: (w) => list.push(w) };
}
