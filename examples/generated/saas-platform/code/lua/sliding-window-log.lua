--[[ sliding-window-log.lua - exact sliding window log, for auth brute-force limits.

Each key is a sorted set of admitted attempts (score = Redis time in
microseconds). One call checks 1..n keys atomically, typically two:

KEYS[1]  first log,  e.g. "rl:{auth:login}:un:<sha256(username)>"
KEYS[2]  second log, e.g. "rl:{auth:login}:ip:<client-ip>"   (optional)
         Pass only the keys you have (a request without a username checks
         the IP log alone). All keys MUST share one hash tag, placed before
         any user-supplied text, so they live in one Redis Cluster slot and
         the script stays atomic there (a cross-slot call fails loudly with
         CROSSSLOT rather than silently splitting the check).
ARGV[2i-1]  limit_i      attempts allowed in key i's window (integer >= 1)
ARGV[2i]    window_ms_i  key i's window length in ms (integer >= 1)
ARGV[2n+1]  cost         attempts this request counts for (default 1)

Returns {allowed, remaining, retry_after_ms, reset_ms, denied_by}:
  allowed         1 admitted (recorded in EVERY key), 0 denied (recorded in none)
  remaining       attempts left, the minimum over the keys
  retry_after_ms  0 when admitted; when denied, ms until every key would
                  admit this request; -1 when cost > a key's limit (never)
  reset_ms        ms until every key is empty again (its full limit back)
  denied_by       0 when admitted, else the 1-based index of the key that
                  binds (the longest retry_after; the first one on a tie)

Window: an attempt at time t counts while now - window < t <= now (exact).
Time comes from redis.call('TIME'), never from the caller.

Only ADMITTED attempts are recorded, and only when every key admits:
  - The attacker's guess rate is bounded exactly (limit per window per key)
    whether or not denied attempts are logged: a denied attempt never
    reaches the password check, so it gains nothing.
  - Recording denials would let anyone who hammers a username keep its
    owner locked out forever (a lockout DoS on the victim) and would let a
    flood grow the log without bound; admitted-only logs hold at most
    `limit` entries, so memory per key is bounded.
  - All-or-nothing across keys: an attempt stopped by the IP log does not
    spend the username's budget, and vice versa.

Dual keys and Redis Cluster: both logs of an auth endpoint share the tag
(e.g. {auth:login}), so all of that endpoint's auth state sits in one slot,
on one shard. That is fine: auth traffic is low and each log is bounded by
its limit. The alternative, two calls on two slots, can not be atomic: one
key could record an attempt that the other then denies.

Members are "<time_us>-<n>" with n the log's size, made unique with ZADD NX
so two attempts in the same microsecond never collide.

TTL: every admission sets PEXPIRE window_ms on each key it records in: the
newest entry is now, so the key vanishes exactly when its log would be empty.
A denial only trims expired entries; the existing TTL stays.
]]
-- (Redis 7 replicates a script's effects only; 5 and 6 by default, and this asks for it there)
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end

local n = #KEYS
local cost = tonumber(ARGV[2 * n + 1]) or 1
if n < 1 or cost < 1 then
  return redis.error_reply('ERR sliding-window-log.lua: want 1+ keys, ARGV limit,window_ms per key, cost>=1')
end

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

local remaining, retry_after, reset, denied_by = math.huge, 0, 0, 0
local counts = {}

for i = 1, n do
  local key = KEYS[i]
  local limit = tonumber(ARGV[2 * i - 1])
  local window = tonumber(ARGV[2 * i])
  if not (limit and window and limit >= 1 and window >= 1) then
    return redis.error_reply('ERR sliding-window-log.lua: bad limit/window for key ' .. i)
  end
  window = window * 1000

  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
  local count = redis.call('ZCARD', key)
  counts[i] = count
  if limit - count < remaining then remaining = limit - count end

  if count + cost > limit then
    local wait = -1
    if cost <= limit then
      -- the (count + cost - limit)-th oldest attempt must leave the window
      local k = count + cost - limit - 1
      local oldest = redis.call('ZRANGE', key, k, k, 'WITHSCORES')
      wait = math.ceil((tonumber(oldest[2]) + window - now) / 1000)
    end
    if denied_by == 0 or (retry_after ~= -1 and (wait == -1 or wait > retry_after)) then
      retry_after, denied_by = wait, i
    end
  end
end

if remaining < 0 then remaining = 0 end
if denied_by > 0 then
  -- reset: when the newest attempt of every key has left its window
  for i = 1, n do
    if counts[i] > 0 then
      local newest = redis.call('ZRANGE', KEYS[i], -1, -1, 'WITHSCORES')
      local key_reset = math.ceil((tonumber(newest[2]) + tonumber(ARGV[2 * i]) * 1000 - now) / 1000)
      if key_reset > reset then reset = key_reset end
    end
  end
  return {0, remaining, retry_after, reset, denied_by}
end

for i = 1, n do
  local key = KEYS[i]
  local added, seq = 0, counts[i]
  while added < cost do
    seq = seq + 1
    added = added + redis.call('ZADD', key, 'NX', now, string.format('%d-%d', now, seq))
  end
  redis.call('PEXPIRE', key, ARGV[2 * i])
end

local window_max = 0
for i = 1, n do
  local w = tonumber(ARGV[2 * i])
  if w > window_max then window_max = w end
end
return {1, remaining - cost, 0, window_max, 0}
