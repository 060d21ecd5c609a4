/**
 * The prompt adapter: the only way the interview talks to a person.
 *
 * Steps ask through the small Prompter interface; `inquirerPrompter` implements it with
 * @inquirer/prompts on a terminal, tests implement it with scripted answers, and
 * `refusingPrompter` stands in when the run is non-interactive (--yes, no TTY), so a step
 * that asks by mistake fails loudly instead of blocking on input.
 *
 * Validators return true or the message to show: what is allowed, with an example.
 */
type Inquirer = typeof import('@inquirer/prompts');

let inquirer: Promise<Inquirer> | undefined;
/** Loaded on the first question, so commands and runs that ask nothing do not pay for it. */
function load(): Promise<Inquirer> {
  inquirer ??= import('@inquirer/prompts');
  return inquirer;
}

type Validator<T> = (value: T) => true | string;

export interface PromptChoice<T> {
  value: T;
  name: string;
  description?: string;
  checked?: boolean;
}

export interface SelectQuestion<T> {
  message: string;
  choices: readonly PromptChoice<T>[];
  default?: T;
}

export interface CheckboxQuestion<T> {
  message: string;
  choices: readonly PromptChoice<T>[];
  validate?: Validator<readonly T[]>;
}

export interface InputQuestion {
  message: string;
  default?: string;
  /** Runs on the trimmed text. */
  validate?: Validator<string>;
}

export interface ConfirmQuestion {
  message: string;
  default?: boolean;
}

export interface Prompter {
  select<T>(q: SelectQuestion<T>): Promise<T>;
  checkbox<T>(q: CheckboxQuestion<T>): Promise<T[]>;
  /** Returns the trimmed text (the default when the person just presses Enter). */
  input(q: InputQuestion): Promise<string>;
  confirm(q: ConfirmQuestion): Promise<boolean>;
}

/** The person pressed Ctrl-C (or closed the terminal) at a prompt. */
export class PromptCancelled extends Error {
  constructor() {
    super('cancelled at a prompt');
    this.name = 'PromptCancelled';
  }
}

/** A step asked a question in a run that must not ask any: a bug, never a user error. */
export class UnexpectedPrompt extends Error {
  constructor(message: string) {
    super(`internal error: a question was asked in a non-interactive run: ${message}`);
    this.name = 'UnexpectedPrompt';
  }
}

function isCancellation(e: unknown): boolean {
  return e instanceof Error && (e.name === 'ExitPromptError' || e.name === 'AbortPromptError' || e.name === 'CancelPromptError');
}

async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (isCancellation(e)) throw new PromptCancelled();
    throw e;
  }
}

interface InquirerOptions {
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
}

/** The terminal implementation. */
export function inquirerPrompter(options: InquirerOptions = {}): Prompter {
  const context = { ...(options.input ? { input: options.input } : {}), ...(options.output ? { output: options.output } : {}) };
  return {
    select<T>(q: SelectQuestion<T>) {
      return guarded(async () =>
        (await load()).select<T>(
          {
            message: q.message,
            choices: q.choices.map((c) => ({ value: c.value, name: c.name, ...(c.description ? { description: c.description } : {}) })),
            ...(q.default !== undefined ? { default: q.default } : {}),
            pageSize: 12,
          },
          context,
        ),
      );
    },
    checkbox<T>(q: CheckboxQuestion<T>) {
      return guarded(async () => {
        const picked = await (await load()).checkbox<T>(
          {
            message: q.message,
            choices: q.choices.map((c) => ({
              value: c.value,
              name: c.name,
              ...(c.description ? { description: c.description } : {}),
              ...(c.checked ? { checked: true } : {}),
            })),
            pageSize: 12,
            ...(q.validate ? { validate: (chosen) => (q.validate as Validator<readonly T[]>)(chosen.map((c) => c.value)) } : {}),
          },
          context,
        );
        return [...picked];
      });
    },
    input(q: InputQuestion) {
      return guarded(async () => {
        const text = await (await load()).input(
          {
            message: q.message,
            ...(q.default !== undefined && q.default !== '' ? { default: q.default } : {}),
            ...(q.validate ? { validate: (v: string) => (q.validate as Validator<string>)(v.trim()) } : {}),
          },
          context,
        );
        return text.trim();
      });
    },
    confirm(q: ConfirmQuestion) {
      return guarded(async () =>
        (await load()).confirm({ message: q.message, ...(q.default !== undefined ? { default: q.default } : {}) }, context),
      );
    },
  };
}

/** For non-interactive runs: any question is a bug. */
export function refusingPrompter(): Prompter {
  const refuse = (q: { message: string }): never => {
    throw new UnexpectedPrompt(q.message);
  };
  return {
    select: async (q) => refuse(q),
    checkbox: async (q) => refuse(q),
    input: async (q) => refuse(q),
    confirm: async (q) => refuse(q),
  };
}
