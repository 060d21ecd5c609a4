--[[ fixed-window.lua - long-period business quota (calendar period or rolling window).

Two modes, chosen by ARGV[1].
Returns, in both modes, {allowed, remaining, retry_after_ms, reset_ms}, all integers:
  allowed         1 admitted (cost counted), 0 denied (nothing counted)
  remaining       quota left after this decision
  retry_after_ms  0 when admitted; when denied, ms until enough quota frees
                  up for this request; -1 when cost > limit (never)
  reset_ms        ms until the whole quota is available again

--- mode 'calendar': a calendar period (day, week, month...) in the plan's
IANA time zone. Lua in Redis has no time zone database, so the CALLER works
out the current period and passes its id and end; the key includes the id,
so a new period simply starts a new counter.
KEYS[1]  counter key with the period id, e.g. "rl:{q:t42}:month:2026-03"
ARGV[1]  'calendar'
ARGV[2]  limit          quota for the period (integer >= 1)
ARGV[3]  cost           units this request takes (integer >= 1)
ARGV[4]  window_end_ms  end of the period, epoch ms (exclusive)
ARGV[5]  slack_ms       extra lifetime after the end (default 60000), for
                        callers whose clock runs behind Redis's
retry_after_ms and reset_ms count down to window_end_ms on the Redis clock.
TTL: PEXPIREAT max(window_end, now) + slack, set by the increment that
creates the counter (the only way the counter comes to exist).

--- mode 'rolling': a rolling window (e.g. 30 days) needs no time zone. The
window is cut into buckets (e.g. one per UTC day); the key is one small hash
{bucket id -> count} holding at most window/bucket fields.
KEYS[1]  hash key, e.g. "rl:{q:t42}:rolling30d"
ARGV[1]  'rolling'
ARGV[2]  limit      quota for the window (integer >= 1)
ARGV[3]  cost       units this request takes (integer >= 1)
ARGV[4]  window_ms  window length, a whole multiple of bucket_ms (e.g. 30 days)
ARGV[5]  bucket_ms  bucket length (e.g. 86400000, one day)
Exactness: usage is counted per bucket, so a unit used at time t counts
until the end of the bucket that is window/bucket - 1 buckets after t's:
between window - bucket and window after t (29 to 30 days for 30 days with
daily buckets). It never counts longer than the window; memory is bounded.
TTL: PEXPIREAT at the moment the newest bucket leaves the window, set by the
increment that opens that bucket; buckets that left the window are deleted
on the way.

Time comes from redis.call('TIME'), never from the caller (the caller only
names the calendar period and its end).
]]
-- (Redis 7 replicates a script's effects only; 5 and 6 by default, and this asks for it there)
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end

local mode = ARGV[1]
local limit = tonumber(ARGV[2])
local cost = tonumber(ARGV[3]) or 1
if not (limit and limit >= 1 and cost >= 1) then
  return redis.error_reply('ERR fixed-window.lua: want ARGV limit>=1, cost>=1')
end

local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local key = KEYS[1]

if mode == 'calendar' then
  local window_end = tonumber(ARGV[4])
  local slack = tonumber(ARGV[5]) or 60000
  if not window_end then
    return redis.error_reply('ERR fixed-window.lua: calendar mode wants ARGV[4] window_end_ms')
  end
  local reset = window_end - now
  if reset < 0 then reset = 0 end
  local used = tonumber(redis.call('GET', key) or 0)
  if used + cost > limit then
    local retry_after = -1
    if cost <= limit then retry_after = math.max(1, reset) end
    return {0, math.max(0, limit - used), retry_after, reset}
  end
  redis.call('INCRBY', key, cost)
  if used == 0 then
    -- a new period's counter: it expires after the period (never in the past)
    redis.call('PEXPIREAT', key, string.format('%d', math.max(window_end, now) + slack))
  end
  return {1, limit - used - cost, 0, reset}
end

if mode == 'rolling' then
  local window = tonumber(ARGV[4])
  local bucket_ms = tonumber(ARGV[5])
  if not (window and bucket_ms and bucket_ms >= 1 and window >= bucket_ms) then
    return redis.error_reply('ERR fixed-window.lua: rolling mode wants ARGV[4] window_ms >= ARGV[5] bucket_ms >= 1')
  end
  local buckets = math.floor(window / bucket_ms)
  local current = math.floor(now / bucket_ms)
  local oldest = current - buckets + 1

  local fields = redis.call('HGETALL', key)
  local live, stale, used, has_current = {}, {}, 0, false
  for i = 1, #fields, 2 do
    local id, count = tonumber(fields[i]), tonumber(fields[i + 1])
    if id < oldest then
      stale[#stale + 1] = fields[i]
    else
      live[#live + 1] = {id, count}
      used = used + count
      if id == current then has_current = true end
    end
  end
  table.sort(live, function(a, b) return a[1] < b[1] end)

  -- bucket id b leaves the window at (b + buckets) * bucket_ms
  local reset = 0
  if #live > 0 then reset = (live[#live][1] + buckets) * bucket_ms - now end

  if used + cost > limit then
    local retry_after = -1
    if cost <= limit then
      local need, freed = used + cost - limit, 0
      for _, b in ipairs(live) do
        freed = freed + b[2]
        if freed >= need then
          retry_after = (b[1] + buckets) * bucket_ms - now
          break
        end
      end
    end
    return {0, math.max(0, limit - used), retry_after, reset}
  end

  if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
  redis.call('HINCRBY', key, string.format('%d', current), cost)
  local expire_at = (current + buckets) * bucket_ms
  if not has_current then
    -- the current bucket is new: the key now lives until it leaves the window
    redis.call('PEXPIREAT', key, string.format('%d', expire_at))
  end
  return {1, limit - used - cost, 0, expire_at - now}
end

return redis.error_reply("ERR fixed-window.lua: ARGV[1] must be 'calendar' or 'rolling'")
