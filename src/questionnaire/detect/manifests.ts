/**
 * Other languages' manifests at the project root (go.mod, pyproject.toml, Gemfile, pom.xml, ...):
 * the API is not a Node.js application, so the shipped TypeScript runtime can not be mounted in
 * it and is the reference to port (stack.language), and no framework adapter applies
 * (stack.framework: other). The web framework the manifest names goes into the detail, for the
 * reader.
 *
 * Only the root is read: a manifest deeper down is as often documentation tooling
 * (docs/requirements.txt) as the application. Runs after the package.json detector, so a
 * project with a root package.json keeps its Node.js answers.
 */
import { parseStructured } from '../../io/text.js';
import { asString, isRecord, printable } from './shared.js';
import { FIELDS, type Fact, type ProjectFs } from './types.js';

interface Manifest {
  /** A root file name, or a pattern for names such as Api.csproj. */
  file: string | RegExp;
  language: string;
  /** Web frameworks as the manifest names them, and how to call them. */
  frameworks: ReadonlyArray<readonly [RegExp, string]>;
}

const PYTHON: Manifest['frameworks'] = [
  [/\bfastapi\b/i, 'FastAPI'],
  [/\bdjango\b/i, 'Django'],
  [/\bflask\b/i, 'Flask'],
  [/\bstarlette\b/i, 'Starlette'],
  [/\baiohttp\b/i, 'aiohttp'],
];
const JVM: Manifest['frameworks'] = [
  [/spring-boot/, 'Spring Boot'],
  [/\bquarkus\b/, 'Quarkus'],
  [/\bmicronaut\b/, 'Micronaut'],
  [/\bktor\b/, 'Ktor'],
];

/** In precedence order: the first present gives the language. */
const MANIFESTS: readonly Manifest[] = [
  {
    file: 'go.mod',
    language: 'Go',
    frameworks: [
      [/github\.com\/gin-gonic\/gin\b/, 'Gin'],
      [/github\.com\/labstack\/echo\b/, 'Echo'],
      [/github\.com\/go-chi\/chi\b/, 'chi'],
      [/github\.com\/gofiber\/fiber\b/, 'Fiber'],
      [/github\.com\/gorilla\/mux\b/, 'gorilla/mux'],
    ],
  },
  { file: 'pyproject.toml', language: 'Python', frameworks: PYTHON },
  { file: 'requirements.txt', language: 'Python', frameworks: PYTHON },
  { file: 'Pipfile', language: 'Python', frameworks: PYTHON },
  {
    file: 'Gemfile',
    language: 'Ruby',
    frameworks: [
      [/['"]rails['"]/, 'Rails'],
      [/['"]sinatra['"]/, 'Sinatra'],
    ],
  },
  { file: 'pom.xml', language: 'Java', frameworks: JVM },
  { file: 'build.gradle.kts', language: 'Kotlin', frameworks: JVM },
  { file: 'build.gradle', language: 'Java', frameworks: JVM },
  {
    file: 'Cargo.toml',
    language: 'Rust',
    frameworks: [
      [/^\s*axum\s*=/m, 'axum'],
      [/^\s*actix-web\s*=/m, 'actix-web'],
      [/^\s*rocket\s*=/m, 'Rocket'],
    ],
  },
  { file: /^[^/]+\.csproj$/, language: 'C#', frameworks: [[/Microsoft\.NET\.Sdk\.Web/, 'ASP.NET Core']] },
  {
    file: 'composer.json',
    language: 'PHP',
    frameworks: [
      [/laravel\/framework/, 'Laravel'],
      [/symfony\/framework-bundle/, 'Symfony'],
    ],
  },
  { file: 'mix.exs', language: 'Elixir', frameworks: [[/:phoenix\b/, 'Phoenix']] },
];

export async function detect(fs: ProjectFs): Promise<Fact[]> {
  const root = (await fs.list('')).filter((f) => !f.includes('/'));
  for (const m of MANIFESTS) {
    const file = typeof m.file === 'string' ? root.find((f) => f === m.file) : root.find((f) => (m.file as RegExp).test(f));
    if (file === undefined) continue;
    const text = (await fs.read(file)) ?? '';
    const framework = m.frameworks.find(([re]) => re.test(text))?.[1];
    const named = framework === undefined ? '' : ` (${framework})`;
    return [
      {
        field: FIELDS.language,
        value: m.language,
        source: file,
        detail: framework === undefined ? 'at the project root' : `at the project root, names ${framework}`,
      },
      {
        field: FIELDS.framework,
        value: 'other',
        source: file,
        detail: `a ${m.language} application${named}: the generated middleware is TypeScript for Node.js, the reference to port`,
      },
    ];
  }
  return [];
}

/** The value of `key = "..."` (or '...') in the TOML table `[table]`, read line by line. */
function tomlString(text: string, table: string, key: string): string | undefined {
  let current = '';
  for (const line of text.split(/\r?\n/)) {
    const header = /^\s*\[([^\]]+)\]\s*(?:#.*)?$/.exec(line);
    if (header) {
      current = (header[1] as string).trim();
      continue;
    }
    if (current !== table) continue;
    const m = new RegExp(`^\\s*${key}\\s*=\\s*(?:"([^"\\\\]*)"|'([^']*)')`).exec(line);
    if (m) return m[1] ?? m[2];
  }
  return undefined;
}

/** The last part of a Go module path (github.com/acme/orders/v2 -> orders). */
function goModuleName(text: string): string | undefined {
  const m = /^\s*module\s+"?([^\s"]+)"?/m.exec(text);
  if (!m) return undefined;
  const parts = (m[1] as string).split('/').filter(Boolean);
  const last = parts.at(-1);
  return last !== undefined && /^v\d+$/.test(last) && parts.length > 1 ? parts.at(-2) : last;
}

/** The project's own artifactId: the first one outside <parent>, the dependencies, the build and the profiles. */
function pomName(text: string): string | undefined {
  const own = text
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(parent|dependencies|dependencyManagement|build|profiles|reporting|modules|plugins)\b[\s\S]*?<\/\1>/g, '');
  const id = /<artifactId>\s*([^<]+?)\s*<\/artifactId>/.exec(own)?.[1];
  return id !== undefined && !id.includes('${') ? id : undefined;
}

/** Where each manifest keeps the project's name, in the order of MANIFESTS' languages. */
const NAMES: ReadonlyArray<readonly [string | RegExp, (text: string, file: string) => string | undefined]> = [
  ['go.mod', goModuleName],
  ['pyproject.toml', (t) => tomlString(t, 'project', 'name') ?? tomlString(t, 'tool.poetry', 'name')],
  ['pom.xml', pomName],
  ['settings.gradle.kts', (t) => /^\s*rootProject\.name\s*=\s*"([^"]+)"/m.exec(t)?.[1]],
  ['settings.gradle', (t) => /^\s*rootProject\.name\s*=\s*['"]([^'"]+)['"]/m.exec(t)?.[1]],
  ['Cargo.toml', (t) => tomlString(t, 'package', 'name')],
  [/^[^/]+\.csproj$/, (t, file) => /<AssemblyName>\s*([^<$]+?)\s*<\/AssemblyName>/.exec(t)?.[1] ?? file.replace(/\.csproj$/, '')],
  [
    'composer.json',
    (t) => {
      const name = /"name"\s*:\s*"([^"]+)"/.exec(t)?.[1];
      return name?.split('/').at(-1);
    },
  ],
  ['mix.exs', (t) => /\bapp:\s*:([A-Za-z_][A-Za-z0-9_]*)/.exec(t)?.[1]],
];

/**
 * The project's name as its manifest at the root spells it: package.json's name, else the last
 * part of go.mod's module path, pyproject.toml's [project] or [tool.poetry] name, pom.xml's
 * artifactId, settings.gradle's rootProject.name, Cargo.toml's [package] name, the .csproj's
 * assembly (or file) name, composer.json's package name or mix.exs's app. Printable, at most
 * 120 characters; undefined when none names one.
 */
export async function projectName(fs: ProjectFs): Promise<string | undefined> {
  const clean = (name: string | undefined): string | undefined => {
    const text = name === undefined ? '' : printable(name, 120).trim();
    return text.length > 0 ? text : undefined;
  };
  const pkg = await fs.read('package.json');
  if (pkg !== undefined) {
    const parsed = parseStructured(pkg, 'package.json');
    const doc = parsed.ok ? parsed.docs[0] : undefined;
    const name = clean(isRecord(doc) ? asString(doc.name) : undefined);
    if (name !== undefined) return name;
  }
  const root = (await fs.list('')).filter((f) => !f.includes('/'));
  for (const [pattern, read] of NAMES) {
    const file = typeof pattern === 'string' ? root.find((f) => f === pattern) : root.find((f) => pattern.test(f));
    if (file === undefined) continue;
    const text = await fs.read(file);
    const name = clean(text === undefined ? undefined : read(text, file));
    if (name !== undefined) return name;
  }
  return undefined;
}
