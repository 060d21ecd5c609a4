/** The interview, in order: the output (format, path, code folder) first, then the seven design questions. */
import type { Step } from '../context.js';
import { codeDir } from './code-dir.js';
import { endpoints } from './endpoints.js';
import { existing } from './existing.js';
import { failure } from './failure.js';
import { goals } from './goals.js';
import { identities } from './identities.js';
import { outbound } from './outbound.js';
import { outputFormat } from './output-format.js';
import { outputPath } from './output-path.js';
import { plans } from './plans.js';
import { stack } from './stack.js';
import { traffic } from './traffic.js';

export const STEPS: readonly Step[] = [
  outputFormat,
  outputPath,
  codeDir,
  goals,
  stack,
  identities,
  endpoints,
  traffic,
  plans,
  failure,
  outbound,
  existing,
];
