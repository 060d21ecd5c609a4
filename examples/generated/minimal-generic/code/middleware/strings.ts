// rl-design 0.1.0 runtime, copied verbatim from the rl-design package. Do not edit: generate again.
/**
 * Character access for the loops every request runs (path, method, identity values).
 *
 * ioredis 6 declares `class VerbatimString extends String`, and loading it leaves
 * String.prototype in dictionary mode for the life of the process (Node 20 to 26). V8 then
 * looks `text.charCodeAt` up by name at every call, a generic property load of ~130
 * instructions, where it would otherwise inline the character read. The method taken once
 * and called with .call does not depend on String.prototype's shape, and is inlined again:
 * about 6,000 instructions less per decision on the bench's one-rule design
 * (bench/middleware/README.md).
 */
const charCode: (this: string, index: number) => number = String.prototype.charCodeAt;

/** text.charCodeAt(index), inlined whatever shape String.prototype is in. */
export function charCodeAt(text: string, index: number): number {
  return charCode.call(text, index);
}
