/** A generated source file: written to --code-dir and embedded in the document. */
export interface CodeFile {
  /** Relative POSIX path inside the code directory, e.g. `lua/gcra.lua`, `middleware/express.ts`. */
  path: string;
  /** Fence language for the document: lua, typescript, nginx, yaml, json. */
  language: string;
  content: string;
  /** One phrase saying what the file is for (shown in summaries and the document). */
  description: string;
}
