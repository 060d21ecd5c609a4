/**
 * Escaping, one helper per target, used by every module that writes into that target: Markdown,
 * Mermaid and HTML (markup.ts), TypeScript, Lua, nginx, YAML, Prometheus templates and Cloudflare
 * expressions (code.ts), plain data as a TypeScript literal (ts-value.ts). A test feeds hostile
 * strings through each.
 */
export * from './code.js';
export * from './markup.js';
export * from './ts-value.js';
