/**
 * Wraps printed lines to the terminal's width: a line longer than the terminal is broken at
 * spaces, each continuation indented under the line's text (a list item's text, or the
 * phrase column of the file list), so nothing wraps mid-word at the terminal's edge.
 */

/** Narrower than this, wrapping would do more harm than good: lines are printed as they are. */
const MIN_WRAP_COLUMNS = 40;

/**
 * `line` as lines of at most `columns` characters (a word longer than that stays whole).
 * Continuations start with `indent` spaces: by default the line's own indentation plus two.
 */
export function wrapLine(line: string, columns: number | undefined, indent?: number): string[] {
  if (columns === undefined || columns < MIN_WRAP_COLUMNS || line.length <= columns) return [line];
  const lead = /^ */.exec(line)?.[0].length ?? 0;
  const hang = ' '.repeat(Math.min(indent ?? lead + 2, Math.floor(columns / 2)));
  const words = line.slice(lead).split(' ');
  const out: string[] = [];
  let current = ' '.repeat(lead);
  let fresh = true;
  for (const word of words) {
    if (!fresh && current.length + 1 + word.length > columns) {
      out.push(current);
      current = hang + word;
    } else current = fresh ? current + word : `${current} ${word}`;
    fresh = false;
  }
  out.push(current);
  return out;
}
