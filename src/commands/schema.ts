/** `rl-design schema`: print the answers JSON Schema generated from the zod schema. */
import { answersJsonSchema } from '../answers/schema.js';
import type { CommandContext } from './context.js';

export function schemaText(): string {
  return `${JSON.stringify(answersJsonSchema(), null, 2)}\n`;
}

export function runSchema(ctx: CommandContext): number {
  ctx.stdout(schemaText());
  return 0;
}
