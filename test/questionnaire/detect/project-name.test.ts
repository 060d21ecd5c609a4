/** The project's name from the manifest at its root, read from real temp folders. */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CommandContext } from '../../../src/commands/context.js';
import { runInit } from '../../../src/commands/init.js';
import { nodeProjectFs } from '../../../src/io/project-fs.js';
import { projectName } from '../../../src/questionnaire/detect/index.js';
import { refusingPrompter } from '../../../src/questionnaire/prompt.js';

function folder(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'rl-name-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const nameOf = (files: Record<string, string>): Promise<string | undefined> => projectName(nodeProjectFs(folder(files)));

describe('projectName', () => {
  it("go.mod: the module path's last part, a major-version suffix skipped", async () => {
    expect(await nameOf({ 'go.mod': 'module github.com/acme/orders-api\n\ngo 1.22\n' })).toBe('orders-api');
    expect(await nameOf({ 'go.mod': '// the fleet\nmodule "github.com/acme/fleet/v2"\n' })).toBe('fleet');
    expect(await nameOf({ 'go.mod': 'module telemetry\n' })).toBe('telemetry');
  });

  it('pyproject.toml: [project] name, else [tool.poetry] name; not a name from another table', async () => {
    expect(
      await nameOf({
        'pyproject.toml': '[build-system]\nname = "hatchling"\n\n[project]\nversion = "1.0"\nname = "billing-service"\n',
      }),
    ).toBe('billing-service');
    expect(await nameOf({ 'pyproject.toml': "[tool.black]\nline-length = 100\n[tool.poetry]\nname = 'poetry-app'\n" })).toBe('poetry-app');
    expect(await nameOf({ 'pyproject.toml': '[tool.ruff]\nname = "not-it"\n' })).toBeUndefined();
  });

  it('Cargo.toml [package], pom.xml artifactId (not the parent one), settings.gradle, .csproj, composer.json, mix.exs', async () => {
    expect(await nameOf({ 'Cargo.toml': '[package]\nname = "edge-proxy"\nversion = "0.1.0"\n\n[dependencies]\naxum = "0.7"\n' })).toBe(
      'edge-proxy',
    );
    expect(await nameOf({ 'Cargo.toml': '[workspace]\nmembers = ["a"]\n' })).toBeUndefined();
    const pom = `<?xml version="1.0"?>
<project>
  <!-- <artifactId>commented</artifactId> -->
  <parent><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-parent</artifactId></parent>
  <groupId>com.acme</groupId>
  <artifactId>ledger</artifactId>
  <dependencies><dependency><artifactId>spring-boot-starter-web</artifactId></dependency></dependencies>
</project>`;
    expect(await nameOf({ 'pom.xml': pom })).toBe('ledger');
    expect(await nameOf({ 'build.gradle': 'plugins { id "java" }\n', 'settings.gradle': "rootProject.name = 'inventory'\n" })).toBe(
      'inventory',
    );
    expect(await nameOf({ 'build.gradle.kts': '', 'settings.gradle.kts': 'rootProject.name = "catalog"\n' })).toBe('catalog');
    expect(await nameOf({ 'Shop.Api.csproj': '<Project Sdk="Microsoft.NET.Sdk.Web"></Project>' })).toBe('Shop.Api');
    expect(await nameOf({ 'composer.json': '{"name": "acme/storefront"}' })).toBe('storefront');
    expect(await nameOf({ 'mix.exs': 'def project do\n  [app: :chat_api, version: "0.1.0"]\nend\n' })).toBe('chat_api');
  });

  it("package.json first; a name with control characters is cleaned; a manifest deeper down doesn't count", async () => {
    expect(await nameOf({ 'package.json': '{"name":"web"}', 'go.mod': 'module example.com/other\n' })).toBe('web');
    expect(await nameOf({ 'package.json': '{"private":true}', 'go.mod': 'module example.com/other\n' })).toBe('other');
    expect(await nameOf({ 'go.mod': 'module example.com/evil\u001b[31m\n' })).toBe('evil [31m');
    expect(await nameOf({ 'tools/go.mod': 'module example.com/tools\n' })).toBeUndefined();
    expect(await nameOf({})).toBeUndefined();
  });

  it('init --yes in a Go project writes the module name as project.name', async () => {
    const dir = folder({ 'go.mod': 'module github.com/acme/fleet-telemetry\n\ngo 1.22\n\nrequire github.com/gin-gonic/gin v1.10.0\n' });
    const ctx: CommandContext = { cwd: dir, stdout: () => {}, stderr: () => {}, today: () => '2026-12-02' };
    const code = await runInit(
      ctx,
      { yes: true, format: 'markdown', codeDir: 'none', goals: 'overload' },
      {
        stdinIsTTY: false,
        prompter: refusingPrompter,
        onInterrupt: () => () => {},
        exit: (c) => {
          throw new Error(`exit ${c}`);
        },
        projectFs: nodeProjectFs,
      },
    );
    expect(code).toBe(0);
    const answers = JSON.parse(readFileSync(path.join(dir, 'rate-limit.answers.json'), 'utf8'));
    expect(answers.project.name).toBe('fleet-telemetry');
    expect(readFileSync(path.join(dir, 'docs', 'rate-limit-design.md'), 'utf8')).toContain('fleet-telemetry');
  });
});
