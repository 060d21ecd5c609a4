/**
 * Writing outputs safely: every target is checked before anything is written, each file
 * is written atomically (temp file + rename), and a manifest beside the files records
 * what rl-design wrote (sha256 per file) so a file the user edited since is never
 * overwritten without --force.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { UserError } from '../messages.js';

export const MANIFEST_NAME = '.rl-design-manifest.json';

interface Manifest {
  tool: 'rl-design';
  files: Record<string, string>;
}

export interface PlannedFile {
  /** Absolute path. */
  path: string;
  content: string;
}

export interface WriteResult {
  written: string[];
  unchanged: string[];
}

export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

async function readManifest(dir: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await readFile(path.join(dir, MANIFEST_NAME), 'utf8')) as Manifest;
    if (parsed && typeof parsed.files === 'object') return parsed;
  } catch {
    // no manifest yet, or unreadable: nothing is known to be ours
  }
  return { tool: 'rl-design', files: {} };
}

async function currentContent(file: string): Promise<string | undefined> {
  try {
    const s = await stat(file);
    if (s.isDirectory()) throw new UserError('outputIsDirectory', { file });
    return await readFile(file, 'utf8');
  } catch (e) {
    if (e instanceof UserError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UserError('writeFailed', { file, reason: (e as Error).message });
  }
}

/**
 * Checks every planned file, then writes them. Throws a UserError (exit 2) before
 * writing anything when a target was edited by the user or not written by rl-design.
 */
export async function writeOutputs(files: PlannedFile[], options: { force?: boolean; display?: (abs: string) => string } = {}): Promise<WriteResult> {
  const show = options.display ?? ((p: string) => p);
  const byDir = new Map<string, PlannedFile[]>();
  for (const f of files) {
    const dir = path.dirname(f.path);
    byDir.set(dir, [...(byDir.get(dir) ?? []), f]);
  }
  const manifests = new Map<string, Manifest>();
  const toWrite: PlannedFile[] = [];
  const unchanged: string[] = [];
  for (const [dir, group] of byDir) {
    const manifest = await readManifest(dir);
    manifests.set(dir, manifest);
    for (const f of group) {
      const existing = await currentContent(f.path);
      if (existing === f.content) {
        unchanged.push(f.path);
        continue;
      }
      if (existing !== undefined && !options.force) {
        const recorded = manifest.files[path.basename(f.path)];
        if (recorded === undefined) throw new UserError('foreignFile', { file: show(f.path) });
        if (recorded !== sha256(existing)) throw new UserError('editedFile', { file: show(f.path) });
      }
      toWrite.push(f);
    }
  }
  // Each file is written atomically (temporary file, fsync, rename); the writes run side by
  // side so their fsyncs overlap instead of queueing one after another.
  await Promise.all(
    toWrite.map(async (f) => {
      try {
        await mkdir(path.dirname(f.path), { recursive: true });
        await writeFileAtomic(f.path, f.content, { encoding: 'utf8' });
      } catch (e) {
        throw new UserError('writeFailed', { file: show(f.path), reason: (e as Error).message });
      }
    }),
  );
  // The manifests last: an interrupted run leaves files the old manifest does not vouch for,
  // which the next run refuses to overwrite without --force (never the reverse).
  const manifestWrites: Promise<void>[] = [];
  for (const [dir, group] of byDir) {
    const manifest = manifests.get(dir) as Manifest;
    const next: Manifest = { tool: 'rl-design', files: { ...manifest.files } };
    for (const f of group) next.files[path.basename(f.path)] = sha256(f.content);
    const sorted: Manifest = { tool: 'rl-design', files: Object.fromEntries(Object.entries(next.files).sort(([a], [b]) => a.localeCompare(b))) };
    const text = `${JSON.stringify(sorted, null, 2)}\n`;
    const manifestPath = path.join(dir, MANIFEST_NAME);
    manifestWrites.push(
      (async () => {
        if ((await currentContent(manifestPath)) !== text) {
          await mkdir(dir, { recursive: true });
          await writeFileAtomic(manifestPath, text, { encoding: 'utf8' });
        }
      })(),
    );
  }
  await Promise.all(manifestWrites);
  return { written: toWrite.map((f) => f.path), unchanged };
}

/** Reads a text file for the commands, mapping errors to clear messages. */
export async function readTextFile(file: string, notFound: 'answersNotFound'): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new UserError(notFound, { file });
    throw new UserError('answersUnreadable', { file, reason: (e as Error).message });
  }
}
