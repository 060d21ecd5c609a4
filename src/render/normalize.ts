/**
 * Tidies template output into lint-clean Markdown: outside fenced code blocks, trailing
 * whitespace is removed and runs of blank lines become one; the text starts without and
 * ends with exactly one newline. Fenced code (as mdFence writes it: a backtick fence at
 * the start of a line) is left byte for byte.
 */
export function normalizeMarkdown(markdown: string): string {
  const out: string[] = [];
  let fence: string | undefined;
  let blank = true; // drop leading blank lines
  for (const line of markdown.replace(/\r\n?/g, '\n').split('\n')) {
    if (fence !== undefined) {
      out.push(line);
      if (line.startsWith(fence) && /^`+\s*$/.test(line) && line.trim().length >= fence.length) fence = undefined;
      continue;
    }
    const opening = /^(`{3,})/.exec(line);
    if (opening) {
      fence = opening[1];
      out.push(line.trimEnd());
      blank = false;
      continue;
    }
    const trimmed = line.trimEnd();
    if (trimmed === '') {
      if (!blank) out.push('');
      blank = true;
    } else {
      out.push(trimmed);
      blank = false;
    }
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop();
  return `${out.join('\n')}\n`;
}
