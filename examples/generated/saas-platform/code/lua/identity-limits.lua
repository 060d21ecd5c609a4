--[[ identity-limits.lua - every limit of one identity in one call, all or nothing.

The rules that key on one identity (a tenant's fairness GCRA and its monthly
quota, say) are checked and consumed together: ONE round trip, and when any
of them refuses, none is charged.

KEYS[1]..KEYS[n]  one key per limit, all sharing one hash tag, e.g.
            "rl:{t:42}:req:pro" and "rl:{t:42}:quota:2026-03", so they sit in
            one Redis Cluster slot (a cross-slot call fails with CROSSSLOT,
            it is never split).
ARGV[5i-4] .. ARGV[5i]  five per key i, in the keys' order:
  'g', burst, rate, period_ms, cost
            a GCRA bucket: gcra.lua's algorithm and key layout (capacity
            burst, refilled with rate tokens per period_ms; TAT kept in the
            key's expiry, its sub-millisecond part as the value), so a key
            is the same bucket whichever of the two scripts checks it
  'w', limit, window_end_ms, slack_ms, cost
            a counter for a window the caller names in the key (a calendar
            period or a fixed window), ending at window_end_ms (epoch ms),
            as fixed-window.lua's calendar mode

Returns {denied_by, v1, ..., vn}, all integers (no remaining/reset: the
caller knows each limit and works them out from v):
  denied_by  0 admitted (every key charged), else the 1-based index of the
             first key that refuses (nothing charged anywhere)
  vi         GCRA: microseconds the bucket is ahead of now after this
             decision (admitted), or before it (denied); 0 = a full bucket
             window: units used in the window after this decision
             (admitted), or before it (denied)
From vi: remaining = floor((burst * T - vi) / T), reset = ceil(vi / 1000) ms,
with T = ceil(period_ms * 1000 / rate); a refused bucket's retry_after is
ceil((vi + cost * T - burst * T) / 1000) ms (-1 when cost > burst).

Time is the server's, never the caller's: a bucket reads it from its key's
expiry (PTTL, as gcra.lua does), and a new window counter's expiry takes it
from redis.call('TIME') (the caller only names a window and its end).

TTL: a GCRA key is written with SET ... PX, so it vanishes when its bucket
is full again; a window counter gets PEXPIREAT max(window_end, now) + slack
from the increment that creates it. A denial writes nothing.
]]
if redis.replicate_commands then redis.replicate_commands() end

local n = #KEYS
if n < 1 or #ARGV ~= 5 * n then
  return redis.error_reply('ERR identity-limits.lua: want 1+ keys and 5 ARGV per key')
end

local before, after, denied = {}, {}, 0
for i = 1, n do
  local a = 5 * i - 5
  local kind, cost = ARGV[a + 1], tonumber(ARGV[a + 5])
  local key = KEYS[i]
  if kind == 'g' then
    local burst = tonumber(ARGV[a + 2])
    local interval = math.ceil((tonumber(ARGV[a + 4]) or 1000) * 1000 / (tonumber(ARGV[a + 3]) or 0))
    if not (burst and cost and burst >= 1 and cost >= 1 and interval >= 1 and interval < 1e15) then
      return redis.error_reply('ERR identity-limits.lua: key ' .. i .. ' wants burst>=1, rate>0, period_ms>=1, cost>=1')
    end
    -- TAT - now from the expiry: PTTL * 1000 - v (see gcra.lua)
    local ahead = 0
    local pttl = redis.call('PTTL', key)
    if pttl > 0 then
      ahead = pttl * 1000
      -- (v is always 0 when T is whole milliseconds)
      if interval % 1000 ~= 0 then ahead = ahead - (tonumber(redis.call('GET', key)) or 0) end
      if ahead < 0 then ahead = 0 end
    end
    before[i], after[i] = ahead, ahead + cost * interval
    if ahead + cost * interval > burst * interval and denied == 0 then denied = i end
  elseif kind == 'w' then
    local limit, window_end = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
    if not (limit and window_end and cost and limit >= 1 and cost >= 1) then
      return redis.error_reply('ERR identity-limits.lua: key ' .. i .. ' wants limit>=1, window_end_ms, cost>=1')
    end
    local used = tonumber(redis.call('GET', key) or 0)
    before[i], after[i] = used, used + cost
    if used + cost > limit and denied == 0 then denied = i end
  else
    return redis.error_reply("ERR identity-limits.lua: key " .. i .. " kind must be 'g' or 'w'")
  end
end

if denied > 0 then
  local reply = {denied}
  for i = 1, n do reply[i + 1] = before[i] end
  return reply
end

local reply = {0}
for i = 1, n do
  local a = 5 * i - 5
  local key = KEYS[i]
  if ARGV[a + 1] == 'g' then
    local reset = math.ceil(after[i] / 1000)
    redis.call('SET', key, string.format('%d', reset * 1000 - after[i]), 'PX', string.format('%d', reset))
  else
    redis.call('INCRBY', key, ARGV[a + 5])
    if before[i] == 0 then
      local slack = tonumber(ARGV[a + 4]) or 60000
      local t = redis.call('TIME')
      local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)
      redis.call('PEXPIREAT', key, string.format('%d', math.max(tonumber(ARGV[a + 3]), now_ms) + slack))
    end
  end
  reply[i + 1] = after[i]
end
return reply
