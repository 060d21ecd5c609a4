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
