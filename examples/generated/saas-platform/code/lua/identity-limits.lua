--[[ identity-limits.lua - every limit of one identity, kept in ONE hash, checked
and charged in one call, all or nothing.

The rules that key on one identity (a tenant's fairness GCRA and its monthly
quota, say) keep their state as fields of one small hash, and are checked and
consumed together: ONE key, ONE round trip, and when any of them refuses, none
is charged.

KEYS[1]  the identity's hash: the key prefix and the hash tag alone, e.g.
         "rl:{t:42}" (one key, so it sits in one Redis Cluster slot).
ARGV[1], ARGV[2], ...  per limit, in order, a field name and its kind, then
         its numbers:
  field, 'g', tolerance, increment
           a GCRA bucket, in whole microseconds as gcra.lua takes them:
           tolerance = burst * T, increment = cost * T, with the emission
           interval T = ceil(period_ms * 1000 / rate)
  field, 'w', limit, window_end_ms, cost
           a counter for the window that ends at window_end_ms (epoch ms):
           a calendar period or a fixed window; limit below 10^9

Fields (every value an integer, so the hash stays a small listpack):
  GCRA     the theoretical arrival time, microseconds since the epoch on the
           server's clock (redis.call('TIME')); the bucket is full when it
           is <= now. (A
           hash field has no TTL of its own, so the bucket can not keep its
           state in an expiry as gcra.lua does.)
  counter  the window's end in epoch seconds, then the count in 9 digits:
           1767222000000012345 is 12,345 counted in the window that ends at
           1767222000. A value naming another window counts 0 and is
           overwritten, so a new window starts from 0 in the same field and
           no field grows.
Field names are the caller's (the design names them after the rule's key,
e.g. "req:pro", "quota"): stable when rules are added or reordered.

Returns {denied_by, v1, ..., vn}, all integers (no remaining/reset: the
caller knows each limit and works them out from v):
  denied_by  0 admitted (every limit charged), else the 1-based index of the
             first limit that refuses (nothing charged anywhere)
  vi         GCRA: microseconds the bucket is ahead of now after this
             decision (admitted), or before it (denied); 0 = a full bucket
             counter: units used in the window after this decision
             (admitted), or before it (denied)
From vi: remaining = floor((tolerance - vi) / T), reset = ceil(vi / 1000) ms;
a refused bucket's retry_after is ceil((vi + increment - tolerance) / 1000) ms
(-1 when increment > tolerance).

TTL: the hash always has one, and it only ever moves later: an admission
makes it at least the moment the state it wrote stops mattering (a bucket:
when it is full again; a counter: its window's end, or now if that has
passed, plus 60 s of slack for the callers' clocks), and leaves a later
expiry alone, so a call that touches some limits never cuts the others'
state short. As every write extends it so, the expiry already covers what
the fields held before: when the new state reaches no further (a bucket
beside a quota's longer window), the TTL is not even read. The price, as
for gcra.lua: anything else that changes this key's TTL (PERSIST, EXPIRE)
breaks that. A denial writes nothing.
]]
if redis.replicate_commands then redis.replicate_commands() end

local SLACK_MS = 60000
local key = KEYS[1]
if #KEYS ~= 1 then return redis.error_reply('ERR identity-limits.lua: want 1 key (the identity hash)') end

-- the limits: field, kind and numbers, 4 arguments for a bucket, 5 for a counter
local fields, kinds, x, y, z = {}, {}, {}, {}, {}
local n, a = 0, 1
while a <= #ARGV do
  n = n + 1
  local kind = ARGV[a + 1]
  fields[n], kinds[n] = ARGV[a], kind
  if kind == 'g' then
    x[n], y[n] = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
    if not (x[n] and y[n] and x[n] >= 1 and y[n] >= 1) then
      return redis.error_reply('ERR identity-limits.lua: limit ' .. n .. ' wants tolerance>=1, increment>=1')
    end
    a = a + 4
  elseif kind == 'w' then
    x[n], y[n], z[n] = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4])
    if not (x[n] and y[n] and z[n] and x[n] >= 1 and x[n] < 1e9 and z[n] >= 1) then
      return redis.error_reply('ERR identity-limits.lua: limit ' .. n .. ' wants 1<=limit<1e9, window_end_ms, cost>=1')
    end
    a = a + 5
  else
    return redis.error_reply("ERR identity-limits.lua: limit " .. n .. " kind must be 'g' or 'w'")
  end
end
if n < 1 or a ~= #ARGV + 1 then return redis.error_reply('ERR identity-limits.lua: want 1+ limits (field, kind, numbers)') end

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local now_ms = math.floor(now / 1000)
local stored = redis.call('HMGET', key, unpack(fields))

local before, after, values, denied = {}, {}, {}, 0
-- expire_at: when the state this call writes stops mattering; covered: what the hash's expiry
-- already covers, the same for the state the fields held (each write extended the TTL to it)
local expire_at, covered = 0, 0
for i = 1, n do
  local v = stored[i]
  if kinds[i] == 'g' then
    local tat = tonumber(v) or 0
    -- (a value far beyond any bucket's reach is not a TAT: a full bucket)
    if tat > now + now then tat = 0 end
    if tat > 0 and math.ceil(tat / 1000) > covered then covered = math.ceil(tat / 1000) end
    if tat < now then tat = now end
    before[i], after[i] = tat - now, tat - now + y[i]
    if after[i] > x[i] then
      if denied == 0 then denied = i end
    else
      values[i] = string.format('%d', tat + y[i])
      local e = math.ceil((tat + y[i]) / 1000)
      if e > expire_at then expire_at = e end
    end
  else
    local end_s = math.floor(y[i] / 1000)
    local mark = string.format('%d', end_s)
    local used = 0
    if v and string.sub(v, 1, -10) == mark then used = tonumber(string.sub(v, -9)) or 0 end
    local was = v and tonumber(string.sub(v, 1, -10))
    if was and was * 1000 + SLACK_MS > covered then covered = was * 1000 + SLACK_MS end
    before[i], after[i] = used, used + z[i]
    if after[i] > x[i] then
      if denied == 0 then denied = i end
    else
      values[i] = mark .. string.format('%09d', after[i])
      local e = math.max(end_s * 1000, now_ms) + SLACK_MS
      if e > expire_at then expire_at = e end
    end
  end
end

if denied > 0 then
  local reply = {denied}
  for i = 1, n do reply[i + 1] = before[i] end
  return reply
end

local set = {}
for i = 1, n do
  set[2 * i - 1], set[2 * i] = fields[i], values[i]
end
redis.call('HSET', key, unpack(set))
-- extend, never shorten (nothing is needed when the fields' old state reached as far: the
-- expiry already covers it); PTTL counts from the script's start, no later than now_ms
if expire_at > covered then
  local pttl = redis.call('PTTL', key)
  if pttl < 0 or now_ms + pttl <= expire_at then
    redis.call('PEXPIREAT', key, string.format('%d', expire_at + 1))
  end
end

local reply = {0}
for i = 1, n do reply[i + 1] = after[i] end
return reply
