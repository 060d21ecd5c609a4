/** Output: where generated enforcement code should go, if anywhere (the document embeds it either way). */
import { defaultNote, knownValue, type Step } from '../context.js';
import { pathText } from '../flags.js';

const isNone = (text: string): boolean => text.toLowerCase() === 'none';

export const codeDir: Step = {
  id: 'code-dir',
  fields: ['output.codeDir'],
  async run(ctx) {
    if (ctx.flags.codeDir !== undefined) return ctx.flags.codeDir === null ? {} : { output: { codeDir: ctx.flags.codeDir } };
    const known = knownValue<string>(ctx.known, 'output.codeDir');
    if (!ctx.interactive) return known === undefined ? {} : { output: { codeDir: known } };
    const answer = await ctx.prompt.input({
      message: `Folder for the generated code (Lua scripts, middleware, gateway config), e.g. src/rate-limit; ${known === undefined ? 'empty' : '"none"'} for none${defaultNote(ctx.known, 'output.codeDir')}:`,
      ...(known !== undefined ? { default: known } : {}),
      validate: (text) => {
        if (text === '' || isNone(text)) return true;
        const p = pathText(text);
        return p.ok ? true : `The folder ${p.message}.`;
      },
    });
    return answer === '' || isNone(answer) ? {} : { output: { codeDir: answer } };
  },
};
