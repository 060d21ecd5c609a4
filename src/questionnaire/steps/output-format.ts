/** Phase 0, asked first: the document format. HTML unless the person says otherwise. */
import type { Step } from '../context.js';

export const outputFormat: Step = {
  id: 'output-format',
  async run(ctx) {
    if (ctx.flags.format) return { output: { format: ctx.flags.format } };
    if (!ctx.interactive) return { output: { format: 'html' } };
    const format = await ctx.prompt.select<'html' | 'markdown'>({
      message: 'Format of the design document?',
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
      default: 'html',
    });
    return { output: { format } };
  },
};
