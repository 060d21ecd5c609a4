/**
 * The text of a file read as data: JSON (for .json files) or YAML parsed without throwing, an
 * error's first line for a one-line reason, and where in the text an offset is.
 */
import { parseAllDocuments } from 'yaml';

/** An error's message, its first line only and at most 200 characters: a reason that fits one line. */
export function firstLine(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return (msg.split('\n')[0] ?? '').slice(0, 200);
}

type ParseResult = { ok: true; docs: unknown[] } | { ok: false; error: string };

/**
 * Parses JSON (for .json files) or YAML (every document of a multi-document file; a byte order
 * mark is allowed). Never throws; aliases are capped so a hostile file cannot expand without bound.
 */
export function parseStructured(text: string, path: string): ParseResult {
  const body = text.replace(/^\uFEFF/, '');
  if (/\.json$/i.test(path)) {
    try {
      return { ok: true, docs: [JSON.parse(body) as unknown] };
    } catch (e) {
      return { ok: false, error: `not valid JSON: ${firstLine(e)}` };
    }
  }
  try {
    const docs = parseAllDocuments(body, { prettyErrors: false, uniqueKeys: false });
    const list = Array.isArray(docs) ? docs : [docs];
    const out: unknown[] = [];
    for (const doc of list) {
      const err = doc.errors[0];
      if (err) return { ok: false, error: `not valid YAML: ${firstLine(err)}` };
      out.push(doc.toJS({ maxAliasCount: 100 }));
    }
    return { ok: true, docs: out };
  } catch (e) {
    return { ok: false, error: `not valid YAML: ${firstLine(e)}` };
  }
}

/** The 1-based line and column of an offset (columns in UTF-16 code units, as SARIF counts by default). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
