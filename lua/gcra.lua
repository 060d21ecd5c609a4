--[[ gcra.lua - request limit with token-bucket semantics, implemented as GCRA.

Token bucket of capacity `burst` refilled with `rate` tokens per `period_ms`,
stored as ONE integer: the theoretical arrival time (TAT, in microseconds of
the Redis clock). The bucket is full when TAT <= now; every admitted token
pushes TAT forward by the emission interval T; a request is admitted while
TAT stays within burst * T of now. Same decisions as a token bucket, with a
single string key instead of a hash holding fractional tokens.

KEYS[1]  bucket key, e.g. "rl:{t:42}:api". A single key: the hash tag only
         keeps it beside its siblings in a Redis Cluster.
ARGV[1]  burst      bucket capacity in tokens (integer >= 1)
ARGV[2]  rate       tokens refilled per period (number > 0)
ARGV[3]  period_ms  refill period in ms (integer >= 1; 1000 = rate per second)
ARGV[4]  cost       tokens this request takes (integer >= 1; default 1)

Returns {allowed, remaining, retry_after_ms, reset_ms}, all integers:
  allowed         1 admitted (tokens taken), 0 denied (nothing written)
  remaining       whole tokens left after this decision
  retry_after_ms  0 when admitted; when denied, ms until the same request
                  would be admitted; -1 when cost > burst (never: the
                  request can not fit in the bucket, do not retry)
  reset_ms        ms until the bucket is full again (0 = full)

Time comes from redis.call('TIME'), never from the caller, so app-server
clock skew can not move buckets.

TTL: an admission writes the new TAT with SET ... PX reset_ms, so the key
vanishes exactly when the bucket would be full again (a missing key IS a full
bucket). A denial writes nothing and leaves the existing TTL in place.

Fast denial: that TTL is also how far ahead the bucket is, to the millisecond.
So the script first asks PTTL alone; when even 3 ms less than it would leave
no room for this request, the answer is a denial whatever the exact clock
says, and it is given without reading TIME or the value. A key hammered past
its limit (abuse, a retry storm: the traffic that is unbounded) then costs one
cheap call per request. Everything else, every admission included, takes the
exact path below (which skips reading the value when PTTL said the key is
missing: a full bucket). The decision is the exact one either way.

On a fast denial retry_after_ms and reset_ms come from the TTL, which lags the
stored TAT by up to 1 ms: the expiry is set from Redis' whole-millisecond clock
as of the script's start, while TAT is in microseconds of TIME. So both are
taken as TTL + 2 ms, an upper bound: a client that waits retry_after_ms is
never early, and is at most about 4 ms later than it had to be. remaining is
the TTL's best estimate, which near a token boundary may be one off the exact
clock's (a client relying on it is refused or waits, never admitted wrongly).

Precision: T = ceil(period_ms * 1000 / rate) microseconds. Rounding up to a
whole microsecond means the sustained rate is never above the configured one
and at most 1/T below it (0.1% for T >= 1 ms); burst decisions are exact.
]]
if redis.replicate_commands then redis.replicate_commands() end

local burst = tonumber(ARGV[1])
local interval = math.ceil((tonumber(ARGV[3]) or 1000) * 1000 / (tonumber(ARGV[2]) or 0))
local cost = tonumber(ARGV[4]) or 1
if not (burst and burst >= 1 and cost >= 1 and interval >= 1 and interval < 1e15) then
  return redis.error_reply('ERR gcra.lua: want ARGV burst>=1, rate>0, period_ms>=1, cost>=1')
end
local tolerance = burst * interval

-- Fast denial (see the header): the TTL bounds how far ahead the bucket is.
local pttl = redis.call('PTTL', KEYS[1])
if pttl > 3 and (pttl - 3) * 1000 + cost * interval > tolerance then
  local ahead_ms = pttl + 2 -- TAT - now is below this (see the header)
  local retry_after = -1
  if cost <= burst then retry_after = ahead_ms + math.ceil((cost * interval - tolerance) / 1000) end
  return {0, math.max(0, math.floor((tolerance - pttl * 1000) / interval)), retry_after, ahead_ms}
end

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]

-- A missing key (PTTL -2) is a full bucket: nothing to read.
local tat = now
if pttl ~= -2 then
  tat = tonumber(redis.call('GET', KEYS[1]) or 0)
  if tat < now then tat = now end
end
local new_tat = tat + cost * interval
local ahead = new_tat - now

if ahead > tolerance then
  local retry_after = -1
  if cost <= burst then retry_after = math.ceil((ahead - tolerance) / 1000) end
  return {0, math.floor((tolerance - tat + now) / interval), retry_after,
    math.ceil((tat - now) / 1000)}
end

local reset = math.ceil(ahead / 1000)
redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', string.format('%d', reset))
return {1, math.floor((tolerance - ahead) / interval), 0, reset}
