// Refreshes the screenshots in docs/screenshots/: the saas-platform example's HTML document
// (folder layout, with its code folder) as a reader sees it in Chromium (/usr/bin/chromium,
// never a downloaded browser), at desktop and phone widths, in light and dark schemes.
// Run `npm run screenshots` (it builds first) after changing the renderer or its styles.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs', 'screenshots');
const work = mkdtempSync(path.join(tmpdir(), 'rl-design-screenshots-'));
const cli = path.join(root, 'dist', 'bin', 'rl-design.js');
execFileSync(
  process.execPath,
  [
    cli,
    'generate',
    '--example',
    'saas-platform',
    '--format',
    'html',
    '--layout',
    'folder',
    '--out',
    `${path.join(work, 'docs')}/`,
    '--code-dir',
    path.join(work, 'ratelimit'),
    '--date',
    '2026-12-02',
  ],
  { stdio: 'ignore' },
);

/** name, page, width, scheme, and what to scroll to (an element id, or a figure's caption). */
const SHOTS = [
  ['matrix-1280-light', '01-scope-and-limit-matrix.html', 1280, 'light', { id: '2-limit-matrix' }],
  ['matrix-390-dark', '01-scope-and-limit-matrix.html', 390, 'dark', { id: '2-limit-matrix' }],
  ['rule-details-390-light', '01-scope-and-limit-matrix.html', 390, 'light', { id: 'rule-fairness-free' }],
  ['enforcement-code-1280-dark', '03-algorithms-and-enforcement.html', 1280, 'dark', { id: '49-enforcement-code' }],
  ['placement-1280-light', '03-algorithms-and-enforcement.html', 1280, 'light', { figure: 'Enforcement placement' }],
  ['placement-390-dark', '03-algorithms-and-enforcement.html', 390, 'dark', { figure: 'Enforcement placement' }],
  ['circuit-1280-light', '06-quotas-and-outbound.html', 1280, 'light', { figure: 'Outbound circuit per provider' }],
];

mkdirSync(out, { recursive: true });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  ignoreDefaultArgs: ['--hide-scrollbars'],
});
try {
  for (const [name, file, width, scheme, target] of SHOTS) {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    await page.route('**/*', (route) => (route.request().url().startsWith('file:') ? route.continue() : route.abort()));
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(pathToFileURL(path.join(work, 'docs', file)).href, { waitUntil: 'load' });
    if (target.figure) {
      await page.locator('figure.diagram', { hasText: target.figure }).screenshot({ path: path.join(out, `${name}.png`) });
    } else {
      await page.evaluate((id) => document.getElementById(id)?.scrollIntoView(), target.id);
      await page.screenshot({ path: path.join(out, `${name}.png`) });
    }
    await page.close();
    console.log(`wrote docs/screenshots/${name}.png`);
  }
} finally {
  await browser.close();
  rmSync(work, { recursive: true, force: true });
}
