/** `rl-design validate`: the nine constraints as a CI gate. Exit 1 on any violation. */
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkDesign, formatFinding } from '../constraints/index.js';
import type { CommandContext } from './context.js';
import type { CodeFile } from '../codegen/types.js';
import { displayPath, expandHome, isInside } from '../io/safe-fs.js';
import { UserError } from '../messages.js';
import { loadDesign, type SourceOptions } from './load-design.js';

interface ValidateOptions extends SourceOptions {
  /** The code folder to read the shipped files from (default: output.codeDir of the answers). */
  codeDir?: string;
  json?: boolean;
  /** Print a SARIF 2.1.0 log (for code scanning) instead of text. */
  sarif?: boolean;
}

/** A path as a SARIF artifact URI: relative to the working folder when inside it, else a file:// URI. */
function artifactUri(cwd: string, abs: string, folder = false): string {
  if (isInside(cwd, abs) && abs !== cwd) {
    const rel = path.relative(cwd, abs).split(path.sep).map(encodeURIComponent).join('/');
    return folder ? `${rel}/` : rel;
  }
  const url = pathToFileURL(abs).href;
  return folder && !url.endsWith('/') ? `${url}/` : url;
}

/**
 * The generated files with each one the code folder holds replaced by it, as shipped (a hand
 * edit, a merge or a stale copy included): the checks then read what the gateway, the middleware
 * and the alerting will run. A file the folder does not hold (or holds as a link) is checked as
 * generated.
 */
function withShippedFiles(files: readonly CodeFile[], dir: string): { files: CodeFile[]; read: string[] } {
  const read: string[] = [];
  const out = files.map((f) => {
    const abs = path.join(dir, ...f.path.split('/'));
    if (!existsSync(abs) || !lstatSync(abs).isFile()) return f;
    read.push(f.path);
    return { ...f, content: readFileSync(abs, 'utf8') };
  });
  return { files: out, read };
}

export async function runValidate(ctx: CommandContext, opts: ValidateOptions): Promise<number> {
  if (opts.json && opts.sarif) throw new UserError('badOption', { option: '--sarif', reason: 'use either --json or --sarif, not both' });
  const { design, file, text } = await loadDesign(ctx, { ...opts, date: opts.date ?? '1970-01-01' });
  // the design and the files generated from it: what ships must do what the design says
  const { generateCode } = await import('../codegen/index.js');
  const generated = generateCode(design);
  // the code folder's files, where the answers (or --code-dir) name one that exists; an example's
  // code folder is only read when named
  const dir =
    opts.example && opts.codeDir === undefined
      ? undefined
      : await (await import('./generate.js')).codeFolder(ctx, design, {
          ...(opts.codeDir !== undefined ? { codeDir: opts.codeDir } : {}),
          answersFile: file,
        });
  const shipped = dir !== undefined && existsSync(dir) ? withShippedFiles(generated, dir) : { files: generated, read: [] };
  const files = shipped.files;
  const results = checkDesign(design, files);
  const failed = results.filter((r) => !r.passed);
  const shown = opts.example ? `example ${opts.example}` : path.relative(ctx.cwd, file) || file;
  if (opts.sarif) {
    const { toSarif } = await import('../constraints/sarif.js');
    // the folder the shipped files were read from (--code-dir or output.codeDir), else where the answers would write it
    const codeDir = opts.codeDir ?? design.output.codeDir;
    const log = toSarif(design, results, files, {
      answers: { uri: artifactUri(ctx.cwd, file), text },
      ...(codeDir && codeDir !== 'none'
        ? {
            codeDirUri: artifactUri(
              ctx.cwd,
              dir ?? path.resolve(opts.example || opts.codeDir !== undefined ? ctx.cwd : path.dirname(file), expandHome(codeDir)),
              true,
            ),
          }
        : {}),
    });
    ctx.stdout(`${JSON.stringify(log, null, 2)}\n`);
    return failed.length === 0 ? 0 : 1;
  }
  if (opts.json) {
    ctx.stdout(
      `${JSON.stringify(
        {
          answers: shown,
          ...(dir !== undefined && shipped.read.length > 0 ? { shipped: { codeDir: displayPath(ctx.cwd, dir), files: shipped.read } } : {}),
          passed: failed.length === 0,
          constraints: results.map((r) => ({
            number: r.number,
            id: r.id,
            title: r.title,
            passed: r.passed,
            applicable: r.applicable,
            ...(r.note !== undefined ? { note: r.note } : {}),
            ruleIds: [...new Set(r.findings.map((f) => f.ruleId).filter((x): x is string => !!x))],
            findings: r.findings.map((f) => ({ ...f, message: formatFinding(f) })),
          })),
        },
        null,
        2,
      )}\n`,
    );
    return failed.length === 0 ? 0 : 1;
  }
  ctx.stdout(`Checking the design from ${shown} against the nine constraints:\n`);
  if (dir !== undefined && shipped.read.length > 0)
    ctx.stdout(`  (the ${shipped.read.length} generated files as shipped in ${displayPath(ctx.cwd, dir)}, hand edits included)\n`);
  for (const r of results) {
    const verdict = r.passed ? (r.applicable ? 'PASS' : 'N/A ') : 'FAIL';
    ctx.stdout(`  ${verdict}  ${r.number}. ${r.title} [${r.id}]${r.note !== undefined ? ` (${r.note})` : ''}\n`);
    r.findings.forEach((f) => {
      ctx.stdout(`          - ${f.ruleId ? `${f.ruleId}: ` : ''}${formatFinding(f)}\n`);
    });
  }
  ctx.stdout(
    failed.length === 0 ? `All ${results.length} constraints pass.\n` : `${failed.length} of ${results.length} constraints fail.\n`,
  );
  return failed.length === 0 ? 0 : 1;
}
