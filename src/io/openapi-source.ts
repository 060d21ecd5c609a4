/**
 * Reading an OpenAPI document that may be split across files: the entry file and every file
 * its `$ref`s name, bundled into one document whose references are all internal
 * (`#/...`), by @apidevtools/json-schema-ref-parser.
 *
 * The files are read through the caller's reader only, so the caller's rules hold for every
 * one of them (inside the project or the answers folder, no symbolic links, a size cap).
 * References to anything but a local file (http:, https:, file: URLs) are refused, as are
 * references that leave the folder the reader serves, and more than MAX_SPEC_FILES files.
 */
import path from 'node:path';
import { checkChain, readCapped, TooLargeError } from './safe-fs.js';
import { firstLine, parseStructured } from './text.js';

/** The most files one document may be split into. */
const MAX_SPEC_FILES = 200;
/** The most text all the files of one document may hold together. */
const MAX_SPEC_TOTAL_CHARS = 32 * 1024 * 1024;

/** Reads one file, by its path relative to the reader's folder ('/' separators); undefined when it cannot. */
type SpecReader = (relPath: string) => Promise<string | undefined>;

interface BundledSpec {
  /** The whole document, references internal only. */
  document: Record<string, unknown>;
  /** Every file read, relative to the reader's folder, entry first. */
  files: string[];
}

/** A document that cannot be read: the file at fault (relative) and why, in one line. */
export class SpecReadError extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'SpecReadError';
  }
}

/** The largest file of a document that is read (a large API's whole document is a few megabytes). */
const MAX_SPEC_FILE_BYTES = 8 * 1024 * 1024;

/**
 * Reads the files of a document below `folder` (a real folder the caller trusts): no
 * symbolic link on the way or at the file, a regular file, at most MAX_SPEC_FILE_BYTES.
 * Refusals throw SpecReadError with the reason.
 */
export function folderSpecReader(folder: string): SpecReader {
  return async (rel) => {
    const abs = path.resolve(folder, ...rel.split('/'));
    const r = path.relative(folder, abs);
    if (r === '' || r === '..' || r.startsWith(`..${path.sep}`) || path.isAbsolute(r)) {
      throw new SpecReadError(rel, 'is outside the folder the document may be read from');
    }
    let state;
    try {
      state = await checkChain(folder, abs, () => rel);
    } catch (e) {
      const id = (e as { messageId?: string }).messageId;
      throw new SpecReadError(
        rel,
        id === 'symlinkRefused' ? 'is reached through a symbolic link, which is never followed' : 'is not a regular file',
      );
    }
    if (state !== 'file') throw new SpecReadError(rel, 'does not exist');
    try {
      return (await readCapped(abs, MAX_SPEC_FILE_BYTES, { noFollow: true })).toString('utf8');
    } catch (e) {
      if (e instanceof TooLargeError) throw new SpecReadError(rel, 'is larger than 8 MB');
      throw new SpecReadError(rel, `cannot be read: ${firstLine(e)}`);
    }
  };
}

/** The virtual folder the parser sees: every path it resolves stays below it or is refused. */
const ROOT = '/rl-design-spec';

/** The relative path of a URL the parser hands over, or undefined when it is not below ROOT. */
function relativeOf(url: string): string | undefined {
  let p = url;
  if (/^[a-z][a-z0-9+.-]*:/i.test(p)) return undefined;
  try {
    p = decodeURIComponent(p);
  } catch {
    return undefined;
  }
  const normal = path.posix.normalize(p);
  if (!normal.startsWith(`${ROOT}/`)) return undefined;
  return normal.slice(ROOT.length + 1);
}

/** The entry file as the caller already read and parsed it: its text, and its (first) document. */
interface ReadEntry {
  text: string;
  document: unknown;
}

/**
 * The document at `entry` (relative to the reader's folder) with every `$ref` to another file
 * resolved and bundled in. Throws SpecReadError naming the file that could not be read. With
 * `known`, the entry is not read or parsed again.
 */
export async function bundleSpec(entry: string, read: SpecReader, known?: ReadEntry): Promise<BundledSpec> {
  const { default: $RefParser } = await import('@apidevtools/json-schema-ref-parser');
  const entryUrl = `${ROOT}/${entry.split(path.sep).join('/')}`;
  const knownRel = relativeOf(entryUrl);
  const files: string[] = [];
  const texts = new Map<string, unknown>();
  let total = 0;
  // the parser wraps what a resolver throws; the first refusal is what the caller hears
  let refused: SpecReadError | undefined;
  const load = async (url: string): Promise<unknown> => {
    try {
      return await loadFile(url);
    } catch (e) {
      const error = e instanceof SpecReadError ? e : new SpecReadError(files[files.length - 1] ?? entry, firstLine(e));
      refused ??= error;
      throw error;
    }
  };
  const loadFile = async (url: string): Promise<unknown> => {
    const rel = relativeOf(url);
    if (rel === undefined) {
      throw new SpecReadError(
        files[files.length - 1] ?? entry,
        `refers to ${JSON.stringify(url.slice(0, 200))}: only files in the same folder tree are read, never URLs`,
      );
    }
    if (texts.has(rel)) return texts.get(rel);
    if (files.length >= MAX_SPEC_FILES) throw new SpecReadError(rel, `more than ${MAX_SPEC_FILES} files are referenced`);
    files.push(rel);
    const entryKnown = known !== undefined && rel === knownRel;
    let text: string | undefined;
    try {
      text = entryKnown ? known.text : await read(rel);
    } catch (e) {
      if (e instanceof SpecReadError) throw e;
      throw new SpecReadError(rel, firstLine(e));
    }
    if (text === undefined)
      throw new SpecReadError(rel, 'cannot be read (missing, a symbolic link, outside the allowed folders, or too large)');
    total += text.length;
    if (total > MAX_SPEC_TOTAL_CHARS) throw new SpecReadError(rel, 'makes the document larger than 32 MB in all');
    let value: unknown = entryKnown ? known.document : undefined;
    if (!entryKnown) {
      const parsed = parseStructured(text, rel);
      if (!parsed.ok) throw new SpecReadError(rel, parsed.error);
      value = parsed.docs[0];
    }
    texts.set(rel, value);
    return value;
  };
  try {
    const bundled = await $RefParser.bundle(entryUrl, {
      resolve: {
        external: true,
        file: false,
        http: false,
        // every reference, whatever its scheme, comes here: local files are read, the rest refused
        local: { order: 1, canRead: true, read: (file: { url: string }) => load(file.url) as Promise<object> },
      },
      parse: {
        json: false,
        yaml: false,
        text: false,
        binary: false,
        parsed: { order: 1, canParse: true, allowEmpty: false, parse: (file: { data: unknown }) => file.data as object },
      },
      continueOnError: false,
    });
    if (typeof bundled !== 'object' || bundled === null || Array.isArray(bundled)) throw new SpecReadError(entry, 'is not an object');
    return { document: bundled as Record<string, unknown>, files };
  } catch (e) {
    if (refused) throw refused;
    if (e instanceof SpecReadError) throw e;
    throw new SpecReadError(files[files.length - 1] ?? entry, firstLine(e).replaceAll(ROOT + '/', ''));
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at a JSON pointer (`#/a/b~1c`) of the document, or undefined. */
export function atPointer(doc: unknown, pointer: string): { value: unknown; segments: string[] } | undefined {
  if (!pointer.startsWith('#')) return undefined;
  const body = pointer.slice(1);
  if (body !== '' && !body.startsWith('/')) return undefined;
  let segments: string[];
  try {
    segments =
      body === ''
        ? []
        : body
            .slice(1)
            .split('/')
            .map((s) => decodeURIComponent(s).replace(/~1/g, '/').replace(/~0/g, '~'));
  } catch {
    return undefined;
  }
  let cur: unknown = doc;
  for (const s of segments) {
    if (Array.isArray(cur) && /^\d+$/.test(s)) cur = cur[Number(s)];
    else if (isObject(cur) && Object.hasOwn(cur, s)) cur = cur[s];
    else return undefined;
  }
  return { value: cur, segments };
}

/**
 * A value with its internal `$ref` followed (a chain of them too, at most 32): the value and
 * where it physically is (its path of keys from the root), or undefined when a reference is
 * broken or circular. A value that is no reference is returned with `at`.
 */
export function followRef(doc: unknown, value: unknown, at: readonly string[]): { value: unknown; at: string[] } | undefined {
  let cur = value;
  let where = [...at];
  for (let i = 0; i < 32; i++) {
    if (!isObject(cur) || typeof cur.$ref !== 'string') return { value: cur, at: where };
    const found = atPointer(doc, cur.$ref);
    if (!found) return undefined;
    cur = found.value;
    where = found.segments;
  }
  return undefined;
}

const SPEC_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface SpecOperation {
  method: (typeof SPEC_METHODS)[number];
  /** The path template as the document writes it, e.g. /orders/{id}. */
  path: string;
  /** Where the operation object is in the document (keys from the root): a shared path item is where it is defined. */
  at: string[];
  operation: Record<string, unknown>;
}

/** Every operation of the document's paths, in document order (path items given by reference followed). */
export function specOperations(doc: Record<string, unknown>): SpecOperation[] {
  const out: SpecOperation[] = [];
  if (!isObject(doc.paths)) return out;
  for (const [p, raw] of Object.entries(doc.paths)) {
    const item = followRef(doc, raw, ['paths', p]);
    if (!item || !isObject(item.value)) continue;
    for (const method of SPEC_METHODS) {
      const op = item.value[method];
      if (isObject(op)) out.push({ method, path: p, at: [...item.at, method], operation: op });
    }
  }
  return out;
}

/** The path every route of the document starts with: Swagger's basePath, or the path of the first server's URL; '' when none. */
export function specBasePath(doc: Record<string, unknown>): string {
  let raw: string | undefined;
  if (typeof doc.swagger === 'string' || typeof doc.swagger === 'number') raw = typeof doc.basePath === 'string' ? doc.basePath : undefined;
  else if (Array.isArray(doc.servers) && isObject(doc.servers[0])) {
    const server = doc.servers[0];
    raw = typeof server.url === 'string' ? server.url : undefined;
    const vars = isObject(server.variables) ? server.variables : {};
    raw = raw?.replace(/\{([^}]+)\}/g, (whole, name: string) => {
      const v = vars[name];
      return isObject(v) && v.default !== undefined ? String(v.default) : whole;
    });
  }
  if (!raw) return '';
  const p = /^[a-z][a-z0-9+.-]*:\/\/[^/]*(\/.*)?$/i.exec(raw)?.[1] ?? (raw.startsWith('/') ? raw : '');
  if (p.includes('{')) return '';
  return p.replace(/\/+$/, '');
}

/** '/orders/{id}' under base '/v1' -> '/v1/orders/:id' (the route form of the answers). */
export function specRoute(base: string, template: string): string {
  const joined = `${base}${template}`;
  const withSlash = joined.startsWith('/') ? joined : `/${joined}`;
  return withSlash.replace(/\{([^}/]+)\}/g, ':$1');
}
