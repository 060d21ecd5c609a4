/** Output, asked first: the document format. HTML unless the person (or the previous answers) says otherwise. */
import { defaultNote, knownValue, type Step } from '../context.js';

type Format = 'html' | 'markdown';

export const outputFormat: Step = {
  id: 'output-format',
  fields: ['output.format'],
  async run(ctx) {
    if (ctx.flags.format) return { output: { format: ctx.flags.format } };
    const known = knownValue<Format>(ctx.known, 'output.format');
    if (!ctx.interactive) return { output: { format: known ?? 'html' } };
    const format = await ctx.prompt.select<Format>({
      message: `Format of the design document?${defaultNote(ctx.known, 'output.format', known === 'markdown' ? 'Markdown' : 'HTML')}`,
      choices: [
        {
          value: 'html',
          name: 'HTML (default)',
          description: 'One self-contained page: styled tables, inline SVG diagrams, no scripts; opens from disk in any browser.',
        },
        {
          value: 'markdown',
          name: 'Markdown',
          description: 'One .md file with mermaid diagram blocks, rendered by GitHub, GitLab and VS Code.',
        },
      ],
      default: known ?? 'html',
    });
    return { output: { format } };
  },
};
