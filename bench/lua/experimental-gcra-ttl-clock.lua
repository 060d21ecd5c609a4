--[[ experimental-gcra-ttl-clock.lua - NOT SHIPPED: a measured alternative to lua/gcra.lua.

Same ARGV and reply as gcra.lua (burst, rate, period_ms, cost ->
{allowed, remaining, retry_after_ms, reset_ms}), but the theoretical arrival
time (TAT) lives in the key's EXPIRY instead of its value: the key expires at
E = ceil(TAT in ms) and holds v = E * 1000 - TAT (0..999 microseconds).

Why it is cheaper:
  - PTTL returns TAT - now directly: no TIME call and no parsing of TIME's
    strings; a clear denial is decided by PTTL alone (GET only near the edge).
  - v is an integer below 10000, which Redis shares instead of allocating a
    value object: 16 bytes less per key.
What it costs:
  - the clock is Redis's internal millisecond clock for expiry, not TIME
    (still the server's clock, never the caller's);
  - the state hides in the TTL: anything else that touches the key's TTL
    corrupts the bucket;
  - harder to read for whoever maintains the design.
]]
local burst = tonumber(ARGV[1])
local interval = math.ceil((tonumber(ARGV[3]) or 1000) * 1000 / (tonumber(ARGV[2]) or 0))
local cost = tonumber(ARGV[4]) or 1
local tolerance = burst * interval
local inc = cost * interval

local pttl = redis.call('PTTL', KEYS[1])
local ahead = 0 -- TAT - now, in microseconds
if pttl > 0 then
  ahead = pttl * 1000
  if ahead - 999 + inc <= tolerance then
    -- not a clear denial: read the exact sub-millisecond part
    ahead = ahead - tonumber(redis.call('GET', KEYS[1]))
    if ahead < 0 then ahead = 0 end
  end
end

local new_ahead = ahead + inc
if new_ahead > tolerance then
  local retry_after = -1
  if cost <= burst then retry_after = math.ceil((new_ahead - tolerance) / 1000) end
  return {0, math.max(0, math.floor((tolerance - ahead) / interval)), retry_after, math.ceil(ahead / 1000)}
end

local ttl = math.ceil(new_ahead / 1000)
redis.call('SET', KEYS[1], string.format('%d', ttl * 1000 - new_ahead), 'PX', string.format('%d', ttl))
return {1, math.floor((tolerance - new_ahead) / interval), 0, ttl}
