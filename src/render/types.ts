/** The renderers' input and output shapes. */
import type { ConstraintResult as CheckResult } from '../constraints/index.js';
import type { Design } from '../design/model.js';

/** The result of one of the nine constraint checks, as constraints/index.ts produces it. */
export type ConstraintResult = CheckResult;

/** One file a renderer produces. Nothing is written here: io/ does that. */
export interface OutputFile {
  /** Relative POSIX path (for the folder layout: relative to the folder). */
  path: string;
  content: string;
}

/** A generated enforcement code file, embedded in the document for reading. */
export interface CodeFile {
  /** Relative POSIX path, as written under the code directory. */
  path: string;
  /** Fence language, e.g. `lua`, `typescript`, `nginx`, `yaml`. */
  language: string;
  content: string;
  /** What the file is for, in one phrase (the document lists the files it links). */
  description?: string;
}

export interface RenderInput {
  design: Design;
  checks: ConstraintResult[];
  codeFiles?: CodeFile[];
  /**
   * Relative POSIX path from the document's pages to the code folder, per layout (the single
   * file and the folder's pages sit in different folders): the document links the code files
   * it does not print. Without it, those files are named but not linked.
   */
  codeHref?: { single: string; folder: string };
  /** The code folder as seen from the pages of the chosen layout (set by render/document.ts). */
  codeBase?: string;
}

export type Layout = 'single' | 'folder';
