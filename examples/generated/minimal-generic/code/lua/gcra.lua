--[[ gcra.lua - request limit with token-bucket semantics, implemented as GCRA.

Token bucket of capacity `burst` refilled with `rate` tokens per `period_ms`,
kept as the theoretical arrival time (TAT): the bucket is full when TAT <= now;
every admitted token pushes TAT forward by the emission interval T; a request
is admitted while TAT stays within burst * T of now. Same decisions as a token
bucket, with one small string key instead of a hash holding fractional tokens.

KEYS[1]  bucket key, e.g. "rl:{t:42}:api". A single key: the hash tag only
         keeps it beside its siblings in a Redis Cluster.
The caller works the rule's numbers out once, as whole microseconds, with the
emission interval T = ceil(period_ms * 1000 / rate) for a bucket of capacity
`burst` refilled with `rate` tokens per `period_ms`:
ARGV[1]  tolerance  burst * T (integer >= 1)
ARGV[2]  increment  cost * T, what this request takes (integer >= 1)
ARGV[3]  interval   T (integer >= 1); read only when the answer depends on
         the value (see below) and cost * T is whole milliseconds, and then
         only its remainder by 1000
So the script parses two numbers and divides nothing. Three arguments or
an error that says so; a non-number among them is a Lua error.

Returns ONE integer, how far the bucket is ahead of now (TAT - now, in
microseconds): the caller knows the rule, and the rest follows from it.
  r > 0   admitted (tokens taken); r is TAT - now after this request
  r < 0   denied (nothing written); -r - 1 is TAT - now (0: a full bucket)
With ahead = r or -r - 1:
  remaining       floor((tolerance - ahead) / T) whole tokens left
  retry_after_ms  0 when admitted; when denied, ms until the same request
                  would be admitted: ceil((ahead + increment - tolerance) / 1000),
                  or -1 when increment > tolerance (cost > burst: it can not
                  fit, do not retry)
  reset_ms        ceil(ahead / 1000), ms until the bucket is full again

State in the expiry: the key expires at E = TAT rounded up to a whole
millisecond (the moment the bucket is full again: a missing key IS a full
bucket), and its value is v = E - TAT in microseconds (0 to 999, an integer
Redis shares instead of allocating). So PTTL gives TAT - now, read on Redis'
own expiry clock: no redis.call('TIME'), and a request far past the limit is refused
from PTTL alone (the value is read only when the answer depends on it, and
never when T is a whole number of milliseconds, e.g. 100 per second, as v is
then always 0).
Time is the server's, never the caller's, so app-server clock skew can not
move buckets. That clock counts whole milliseconds: decisions are exact GCRA
on it (TAT itself keeps microseconds), so a client that waits retry_after_ms
is admitted, never early, at most 1 ms later than on a microsecond clock.
The price of the layout: anything else that changes this key's TTL
(PERSIST, EXPIRE, a copy without it) changes the limit.

TTL: an admission writes the key with SET ... PX reset_ms (E - now); a denial
writes nothing and leaves the existing TTL in place. A key found without a TTL
(not written by this script) counts as a full bucket and is overwritten;
one whose value is not a number is an error.

Precision: T = ceil(period_ms * 1000 / rate) microseconds. Rounding up to a
whole microsecond means the sustained rate is never above the configured one
and at most 1/T below it (0.1% for T >= 1 ms); burst decisions are exact.
]]
-- (Redis 7 replicates a script's effects only; 5 and 6 by default, and this asks for it there:
-- on 7 the call would cost as much as the arithmetic below)
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end

if #ARGV ~= 3 then return redis.error_reply('ERR gcra.lua: want 3 ARGV: tolerance, increment, interval (microseconds)') end
-- (arithmetic parses a number at about half the cost of tonumber(), a C call: a non-number is a Lua error)
local tolerance, inc = ARGV[1] + 0, ARGV[2] + 0
if not (tolerance >= 1 and inc >= 1) then
  return redis.error_reply('ERR gcra.lua: want ARGV tolerance>=1, increment>=1, interval>=1 (microseconds)')
end

-- TAT - now in microseconds, from the expiry (see the header): PTTL * 1000 - v
local ahead = redis.call('PTTL', KEYS[1]) * 1000
if ahead <= 0 then
  -- no key (-2), or one without a TTL (-1): a full bucket
  ahead = 0
elseif ahead - 999 + inc > tolerance then
  -- refused whatever v is: PTTL alone decides
  return -ahead - 1
elseif inc % 1000 ~= 0 or ARGV[3] % 1000 ~= 0 then
  -- v matters, and is always 0 when T is whole milliseconds (TAT then moves by whole ms);
  -- (when cost x T is off whole ms, so is T: T is parsed only when it is not)
  ahead = ahead - (redis.call('GET', KEYS[1]) or 0)
  if ahead < 0 then ahead = 0 end
end

local new_ahead = ahead + inc
if new_ahead > tolerance then return -ahead - 1 end

local v = (-new_ahead) % 1000
-- (a number becomes text at about a quarter of a microsecond each: v is 0 whenever T is whole ms)
redis.call('SET', KEYS[1], v == 0 and '0' or string.format('%d', v), 'PX', string.format('%d', (new_ahead + v) / 1000))
return new_ahead
