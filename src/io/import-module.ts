/**
 * import() for the published CLI, which bin.ts compiles through the V8 code cache
 * (io/code-cache.ts). Code compiled by vm.Script has no module loader of its own: import()
 * there fails ("A dynamic import callback was not specified"), and Node's experimental vm
 * option for it does not survive cached data. So bin.ts, a real ES module, lends its
 * import() under a global symbol, and code that loads packages at run time (the optional
 * mermaid-cli and puppeteer) imports through here. Without a lender (tsc's dist/, the tests
 * from sources) it is the plain import().
 */
type Importer = (specifier: string) => Promise<unknown>;

const LENDER = Symbol.for('rl-design.import');

/** Called once by bin.ts with `(s) => import(s)`. */
export function lendImport(importer: Importer): void {
  (globalThis as Record<symbol, unknown>)[LENDER] = importer;
}

/** import(specifier), through the lender when there is one. */
export function importModule<T>(specifier: string): Promise<T> {
  const lent = (globalThis as Record<symbol, unknown>)[LENDER] as Importer | undefined;
  return (lent ? lent(specifier) : import(specifier)) as Promise<T>;
}
