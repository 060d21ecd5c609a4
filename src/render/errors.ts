/** Errors the renderers raise for bad input, in a module of their own so callers can test for them without loading a renderer. */

export interface DeadLink {
  file: string;
  href: string;
  reason: string;
}

/** Raised when a produced document has a link that resolves to nothing. */
export class DeadLinkError extends Error {
  readonly deadLinks: DeadLink[];

  constructor(deadLinks: DeadLink[]) {
    super(
      `dead link${deadLinks.length === 1 ? '' : 's'} in the generated document: ` +
        deadLinks.map((d) => `${d.file}: ${d.href} (${d.reason})`).join('; '),
    );
    this.name = 'DeadLinkError';
    this.deadLinks = deadLinks;
  }
}
