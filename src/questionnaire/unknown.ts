/** "Don't know": a choice at the prompt, and a value every choice flag accepts. */
export const UNKNOWN = 'unknown' as const;
export type Unknown = typeof UNKNOWN;
