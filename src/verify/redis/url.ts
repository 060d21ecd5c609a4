/** Redis URLs: parsed for the client, masked for printing (a password is never shown). */

/** The parts of a redis:// or rediss:// URL a client needs. */
export interface RedisTarget {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db: number;
  tls: boolean;
  /** The URL with any password replaced by ***, for printing. */
  display: string;
}

/**
 * A URL as it may be printed: the password (everything between `//` and the last `@` after
 * a `:`) replaced by ***, so an error about a URL that does not parse never shows it.
 */
export function maskUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/]*)@/i, (_, scheme: string, auth: string) => {
    const colon = auth.indexOf(':');
    return `${scheme}${colon >= 0 ? `${auth.slice(0, colon)}:***` : auth}@`;
  });
}

/** Parses a Redis URL; returns an error text (never holding the password) for anything else. */
export function parseRedisUrl(url: string): RedisTarget | { error: string } {
  const shown = maskUrl(url).replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { error: `"${shown}" is not a URL; use redis://[user:password@]host:port[/db] (percent-encode @ : / # ? in a password)` };
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    return { error: `"${u.protocol}" is not a Redis URL scheme; use redis:// or rediss://` };
  }
  // An @ after the host means a password with an unencoded / ? or #: part of it would be taken
  // for the host or the database, and printed. Said without showing any of it.
  const afterScheme = url.slice(url.indexOf('//') + 2);
  const authorityEnd = afterScheme.search(/[/?#]/);
  if (authorityEnd >= 0 && afterScheme.slice(authorityEnd).includes('@')) {
    return {
      error: 'the URL has an @ after a / ? or #: percent-encode those characters in a password (/ is %2F, ? is %3F, # is %23, @ is %40)',
    };
  }
  if (u.hash || u.search) {
    return {
      error: `"${shown.replace(/[#?].*$/, '')}..." has a # or ?: a Redis URL has neither; percent-encode them in a password (%23, %3F)`,
    };
  }
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (!host) return { error: `"${shown}" names no host` };
  const port = u.port ? Number(u.port) : 6379;
  const dbText = u.pathname.replace(/^\//, '');
  const db = dbText === '' ? 0 : Number(dbText);
  if (!/^\d*$/.test(dbText) || !Number.isSafeInteger(db)) return { error: 'the path after the host must be a database number, such as /0' };
  let username: string;
  let password: string;
  try {
    username = decodeURIComponent(u.username);
    password = decodeURIComponent(u.password);
  } catch {
    return { error: 'the user name or password is not correctly percent-encoded' };
  }
  return {
    host,
    port,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
    db,
    tls: u.protocol === 'rediss:',
    display: `${u.protocol}//${u.username ? `${u.username}${u.password ? ':***' : ''}@` : u.password ? ':***@' : ''}${u.host}${db !== 0 || dbText !== '' ? `/${db}` : ''}`,
  };
}
