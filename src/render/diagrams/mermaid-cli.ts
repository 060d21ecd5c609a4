/**
 * The high-fidelity diagram renderer: Mermaid itself, through @mermaid-js/mermaid-cli, in a
 * headless Chromium. An optional peer dependency: rl-design never installs it (it brings a
 * browser); it is used when the user has it, found from the working directory (the user's
 * project) first and then beside rl-design. Every diagram is rendered ahead, once, so the
 * HTML renderer can stay synchronous; the SVGs then go through the same post-processing and
 * checks as the default renderer's.
 *
 * Mermaid is configured for inline use: plain SVG text labels (htmlLabels off, so no
 * foreignObject), strict security, a unique svgId per diagram, the document's font stack,
 * and colours through themeCSS from the document's CSS variables.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { RawDiagramRenderer } from './index.js';
import { FONT_STACK } from './svg.js';

const MERMAID_CLI_PACKAGE = '@mermaid-js/mermaid-cli';

/** The optional package is not installed (or cannot be loaded). */
export class MermaidCliMissingError extends Error {
  constructor(detail?: string) {
    super(
      `--diagrams mermaid-cli needs the optional package ${MERMAID_CLI_PACKAGE}, which is not installed` +
        `${detail ? ` (${detail})` : ''}. Install it in your project with ` +
        `\`npm install --save-dev ${MERMAID_CLI_PACKAGE}\`, or leave --diagrams out to use the built-in renderer (beautiful-mermaid).`,
    );
    this.name = 'MermaidCliMissingError';
  }
}

/** Mermaid-cli is installed, but rendering failed (no browser, a browser crash, a diagram error). */
export class MermaidCliFailedError extends Error {
  constructor(detail: string) {
    super(`--diagrams mermaid-cli could not render the diagrams: ${detail}`);
    this.name = 'MermaidCliFailedError';
  }
}

/** Colours from the page's CSS variables (templates/html/styles.css); Mermaid scopes them to the diagram. */
const THEME_CSS = [
  '.node rect, .node circle, .node ellipse, .node polygon, .node path { fill: var(--rl-diagram-fill); stroke: var(--rl-diagram-stroke); }',
  '.cluster rect { fill: var(--rl-bg); stroke: var(--rl-diagram-stroke); }',
  '.flowchart-link, .edgePath .path, .transition, .messageLine0, .messageLine1, .actor-line { stroke: var(--rl-diagram-line); }',
  'marker path, .arrowheadPath, .arrowMarkerPath, #arrowhead path, .marker { fill: var(--rl-diagram-arrow); stroke: var(--rl-diagram-arrow); }',
  'text, tspan, .label text, .nodeLabel, .edgeLabel, .messageText, .stateLabel text, .state-title { fill: var(--rl-fg); color: var(--rl-fg); }',
  '.edgeLabel rect, .labelBkg, .edgeLabel .label rect { fill: var(--rl-bg); opacity: 1; }',
  '.actor { fill: var(--rl-diagram-fill); stroke: var(--rl-diagram-stroke); }',
  '.statediagram-state rect.basic, .stateGroup rect { fill: var(--rl-diagram-fill); stroke: var(--rl-diagram-stroke); }',
  '.start-state, .state-start { fill: var(--rl-fg); stroke: var(--rl-fg); }',
].join('\n');

const MERMAID_CONFIG = {
  theme: 'base',
  securityLevel: 'strict',
  htmlLabels: false,
  flowchart: { htmlLabels: false },
  fontFamily: FONT_STACK,
  themeVariables: { fontFamily: FONT_STACK, fontSize: '14px' },
  themeCSS: THEME_CSS,
} as const;

interface MermaidCliModule {
  renderMermaid: (
    browser: unknown,
    definition: string,
    outputFormat: 'svg',
    options: { mermaidConfig?: object; backgroundColor?: string; svgId?: string },
  ) => Promise<{ data: Uint8Array }>;
}

interface PuppeteerModule {
  launch: (options: { headless: boolean; executablePath?: string; args?: string[] }) => Promise<{ close: () => Promise<void> }>;
}

/** The file an ESM `import` of a package resolves to, read from its package.json. */
function packageEntry(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      exports?: unknown;
      module?: string;
      main?: string;
    };
    const pick = (e: unknown): string | undefined => {
      if (typeof e === 'string') return e;
      if (e && typeof e === 'object') {
        const o = e as Record<string, unknown>;
        return pick(o['.']) ?? pick(o.import) ?? pick(o.node) ?? pick(o.default);
      }
      return undefined;
    };
    const entry = pick(pkg.exports) ?? pkg.module ?? pkg.main ?? 'index.js';
    const file = path.join(dir, entry);
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/** Looks for node_modules/<name> from `start` up to the file system root. */
function findPackage(name: string, start: string): string | undefined {
  for (let dir = path.resolve(start); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', ...name.split('/'));
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (path.dirname(dir) === dir) return undefined;
  }
}

async function importPackage<T>(name: string, from: string[]): Promise<{ module: T; dir?: string }> {
  for (const start of from) {
    const dir = findPackage(name, start);
    const entry = dir ? packageEntry(dir) : undefined;
    if (dir && entry) return { module: (await import(pathToFileURL(entry).href)) as T, dir };
  }
  // Last: wherever rl-design itself resolves packages (e.g. installed beside it).
  return { module: (await import(name)) as T };
}

/** A Chromium or Chrome on this machine, or undefined to let puppeteer use its own. */
function findChromium(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const candidates = [
    env.PUPPETEER_EXECUTABLE_PATH,
    env.CHROME_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/usr/bin/google-chrome-stable',
    '/usr/bin/google-chrome',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
  ];
  return candidates.find((c): c is string => typeof c === 'string' && c !== '' && existsSync(c));
}

function isMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/**
 * Loads mermaid-cli (throws MermaidCliMissingError when it is not installed), renders every
 * source once in one browser, and returns a renderer that looks them up.
 */
export async function loadMermaidCli(
  sources: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string | undefined>> },
): Promise<RawDiagramRenderer> {
  let cli: { module: MermaidCliModule; dir?: string };
  try {
    cli = await importPackage<MermaidCliModule>(MERMAID_CLI_PACKAGE, [options.cwd]);
  } catch (e) {
    if (isMissing(e)) throw new MermaidCliMissingError();
    throw new MermaidCliMissingError(`loading it failed: ${(e as Error).message}`);
  }
  if (typeof cli.module.renderMermaid !== 'function') throw new MermaidCliMissingError('it has no renderMermaid function');
  if (sources.length === 0) return () => '';

  let puppeteer: PuppeteerModule;
  try {
    const loaded = await importPackage<PuppeteerModule & { default?: PuppeteerModule }>('puppeteer', [cli.dir ?? options.cwd, options.cwd]);
    puppeteer = loaded.module.default ?? loaded.module;
  } catch (e) {
    throw new MermaidCliMissingError(`its browser driver, puppeteer, is missing: ${(e as Error).message}`);
  }

  const executablePath = findChromium(options.env);
  const args = ['--disable-gpu', '--no-first-run', '--disable-background-networking'];
  if (typeof process.getuid === 'function' && process.getuid() === 0) args.push('--no-sandbox'); // root: Chromium refuses its sandbox
  let browser: { close: () => Promise<void> };
  try {
    browser = await puppeteer.launch({ headless: true, ...(executablePath ? { executablePath } : {}), args });
  } catch (e) {
    throw new MermaidCliFailedError(
      `no usable Chromium (${(e as Error).message.split('\n')[0]}); set PUPPETEER_EXECUTABLE_PATH to a Chrome or Chromium`,
    );
  }
  const rendered = new Map<string, string>();
  try {
    let n = 0;
    for (const source of new Set(sources)) {
      n += 1;
      const { data } = await cli.module.renderMermaid(browser, source, 'svg', {
        mermaidConfig: MERMAID_CONFIG,
        backgroundColor: 'transparent',
        svgId: `mermaid-${n}`,
      });
      rendered.set(source, new TextDecoder().decode(data));
    }
  } catch (e) {
    throw new MermaidCliFailedError((e as Error).message.split('\n')[0] ?? String(e));
  } finally {
    await browser.close().catch(() => undefined);
  }
  return (source) => {
    const svg = rendered.get(source);
    if (svg === undefined) throw new MermaidCliFailedError('a diagram was not rendered ahead');
    return svg;
  };
}
