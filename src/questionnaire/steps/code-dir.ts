/** Phase 0: where generated enforcement code should go, if anywhere (the document embeds it either way). */
import type { Step } from '../context.js';
import { pathText } from '../flags.js';

export const codeDir: Step = {
  id: 'code-dir',
  async run(ctx) {
    if (ctx.flags.codeDir !== undefined) return ctx.flags.codeDir === null ? {} : { output: { codeDir: ctx.flags.codeDir } };
    if (!ctx.interactive) return {};
    const answer = await ctx.prompt.input({
      message: 'Folder for the generated code (Lua scripts, middleware, gateway config), e.g. src/rate-limit; empty for none:',
      validate: (text) => {
        if (text === '') return true;
        const p = pathText(text);
        return p.ok ? true : `The folder ${p.message}.`;
      },
    });
    return answer === '' || answer.toLowerCase() === 'none' ? {} : { output: { codeDir: answer } };
  },
};
