// One cold render of an example's HTML, in-process, without the CLI around it (no argument
// parsing, no file writes): what the renderer itself costs from a cold process.
// Usage: node bench/html/render-once.mjs <example> <single|folder>
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const [name = 'saas-platform', layout = 'single'] = process.argv.slice(2);
const { Answers } = await import(path.join(root, 'dist/answers/schema.js'));
const { buildDesign } = await import(path.join(root, 'dist/design/build.js'));
const { checkDesign } = await import(path.join(root, 'dist/constraints/index.js'));
const { renderHtml } = await import(path.join(root, 'dist/render/html/index.js'));
const { loadBeautifulMermaid } = await import(path.join(root, 'dist/render/diagrams/beautiful.js'));
const answers = Answers.parse(JSON.parse(readFileSync(path.join(root, 'examples', `${name}.answers.json`), 'utf8')));
const design = buildDesign(answers, { date: '2026-12-02' });
const files = renderHtml({ design, checks: checkDesign(design) }, { layout, diagrams: await loadBeautifulMermaid() });
process.stdout.write(`${files.length} files, ${files.reduce((n, f) => n + Buffer.byteLength(f.content), 0)} bytes\n`);
