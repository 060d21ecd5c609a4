/** Output, asked first: the document format. HTML unless the person (or the previous answers) says otherwise. */
import type { Step } from '../context.js';
import { Q } from '../questions.js';
import { resolve } from '../resolve.js';

export const outputFormat: Step = {
  id: 'output-format',
  fields: ['output.format'],
  async run(ctx) {
    const { value } = await resolve(ctx, Q.format);
    return { output: { format: value === 'markdown' ? 'markdown' : 'html' } };
  },
};
