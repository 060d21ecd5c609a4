/**
 * The Redis that verify runs against: either a server the user names with --redis (used as
 * it is: nothing but keys under the run's own prefix is ever written or deleted), or a
 * `redis-server` from PATH that rl-design starts. One module per job:
 * redis/server.ts starts and stops a server, redis/url.ts parses and masks URLs,
 * redis/info.ts reads the server's facts, redis/store.ts opens the clients.
 */
export * from './redis/server.js';
export * from './redis/url.js';
export * from './redis/info.js';
export * from './redis/store.js';
