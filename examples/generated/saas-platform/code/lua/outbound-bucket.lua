--[[ outbound-bucket.lua - shared outbound bucket for a third-party API (GCRA with reservation).

Every instance that calls the provider shares this one bucket (set it at a
safety fraction of the provider's limit, e.g. 90%). Instead of only
rejecting, 'reserve' books the next free slot and says how long to wait
before calling, so callers queue in order; 'pause' records a provider 429.

State: ONE string key holding the theoretical arrival time (TAT) in
microseconds of the Redis clock, as in gcra.lua. A provider pause is kept in
the same value: pausing pushes TAT out so the bucket yields no slot before
the provider's Retry-After and restarts EMPTY (one call, then one per
interval: no burst into a provider that has just throttled us). One key, so
nothing to keep in step; give it a hash tag per provider, e.g.
"rl:{out:stripe}:bucket".

KEYS[1]  the provider's bucket key
ARGV[1]  mode       'reserve' | 'pause'
ARGV[2]  burst      bucket capacity in calls (integer >= 1)
ARGV[3]  rate       calls per period (number > 0), already below the provider limit
ARGV[4]  period_ms  period in ms (integer >= 1)
reserve:
ARGV[5]  cost         slots this call takes (integer >= 1; default 1)
ARGV[6]  max_wait_ms  longest wait the caller accepts (default 0 = only now)
pause:
ARGV[5]  pause_ms     the provider's Retry-After, in ms (integer >= 0)

Returns {reserved, wait_ms, remaining, reset_ms}, all integers:
  reserved   reserve: 1 the slot is booked, call after wait_ms; 0 nothing
             booked (the wait would pass max_wait_ms: queue elsewhere or shed)
             pause: always 1
  wait_ms    ms until the (booked or earliest possible) slot; 0 = call now;
             -1 when cost > burst (never fits)
  remaining  slots still free right now after this decision
  reset_ms   ms until the bucket is full again

Time comes from redis.call('TIME'), never from the caller.
TTL: every write is SET ... PX reset_ms: the key vanishes once the bucket
would be full again (a missing key is a full, unpaused bucket). A refused
reservation writes nothing.
]]
-- (Redis 7 replicates a script's effects only; 5 and 6 by default, and this asks for it there)
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end

local mode = ARGV[1]
local burst = tonumber(ARGV[2])
local interval = math.ceil((tonumber(ARGV[4]) or 1000) * 1000 / (tonumber(ARGV[3]) or 0))
if not (burst and burst >= 1 and interval >= 1 and interval < 1e15) then
  return redis.error_reply('ERR outbound-bucket.lua: want ARGV burst>=1, rate>0, period_ms>=1')
end
local tolerance = burst * interval

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local tat = tonumber(redis.call('GET', KEYS[1]) or 0)
if tat < now then tat = now end

if mode == 'reserve' then
  local cost = tonumber(ARGV[5]) or 1
  local max_wait = tonumber(ARGV[6]) or 0
  if cost < 1 then return redis.error_reply('ERR outbound-bucket.lua: cost must be >= 1') end
  local reset_now = math.ceil((tat - now) / 1000)
  if cost > burst then return {0, -1, math.floor((tolerance - tat + now) / interval), reset_now} end
  local new_tat = tat + cost * interval
  -- earliest start s with new_tat - s <= tolerance
  local wait = new_tat - tolerance - now
  if wait < 0 then wait = 0 end
  wait = math.ceil(wait / 1000)
  if wait > max_wait then
    return {0, wait, math.max(0, math.floor((tolerance - tat + now) / interval)), reset_now}
  end
  local reset = math.ceil((new_tat - now) / 1000)
  redis.call('SET', KEYS[1], string.format('%d', new_tat), 'PX', string.format('%d', reset))
  return {1, wait, math.max(0, math.floor((tolerance - new_tat + now) / interval)), reset}
end

if mode == 'pause' then
  local pause = tonumber(ARGV[5])
  if not (pause and pause >= 0) then
    return redis.error_reply('ERR outbound-bucket.lua: pause wants ARGV[5] pause_ms >= 0')
  end
  -- empty bucket whose first slot opens when the pause ends
  local paused_tat = now + pause * 1000 + tolerance - interval
  if paused_tat > tat then tat = paused_tat end
  if tat <= now then return {1, 0, burst, 0} end
  local reset = math.ceil((tat - now) / 1000)
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', string.format('%d', reset))
  local wait = math.max(0, math.ceil((tat + interval - tolerance - now) / 1000))
  return {1, wait, math.max(0, math.floor((tolerance - tat + now) / interval)), reset}
end

return redis.error_reply("ERR outbound-bucket.lua: ARGV[1] must be 'reserve' or 'pause'")
