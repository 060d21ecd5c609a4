/** Output: where generated enforcement code should go, if anywhere (the document embeds it either way). */
import type { Step } from '../context.js';
import { Q } from '../questions.js';
import { given, resolve } from '../resolve.js';

export const codeDir: Step = {
  id: 'code-dir',
  fields: ['output.codeDir'],
  async run(ctx) {
    const codeDir = given((await resolve(ctx, Q.codeDir)).value);
    return codeDir ? { output: { codeDir } } : {};
  },
};
