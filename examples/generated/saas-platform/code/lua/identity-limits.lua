--[[ identity-limits.lua - every limit of one identity, kept in ONE hash, checked
and charged in one call, all or nothing.

The rules that key on one identity (a tenant's fairness GCRA and its monthly
or rolling quota, say) keep their state as fields of one small hash, and are
checked and consumed together: ONE key, ONE round trip, and when any of them
refuses, none is charged.

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
  field, 'r', limit, bucket_ms, buckets, cost
           a rolling window of `buckets` buckets of bucket_ms each (a rolling
           30-day quota: 30 buckets of 86400000, one per UTC day), counted as
           fixed-window.lua's rolling mode counts it: usage is kept per
           bucket, a unit counts until its bucket leaves the window; limit
           below 10^9

Fields (every value an integer, so the hash stays a small listpack):
  GCRA     the theoretical arrival time, microseconds since the epoch on the
           server's clock (redis.call('TIME')); the bucket is full when it
           is <= now. (A hash field has no TTL of its own, so the bucket can
           not keep its state in an expiry as gcra.lua does.)
  counter  the window's end in epoch seconds, then the count in 9 digits:
           1767222000000012345 is 12,345 counted in the window that ends at
           1767222000. A value naming another window counts 0 and is
           overwritten, so a new window starts from 0 in the same field and
           no field grows.
  rolling  one field per live bucket, named after the limit's field and the
           bucket id (floor(now_ms / bucket_ms)): "quota:20425" holds the
           units counted on 2025-12-03 (UTC); and the window's running total
           in the limit's own field: the first bucket id it counts, then the
           units in 9 digits ("quota" = 20396000012345: 12,345 units in the
           buckets from 20396 on). A call reads the total and the current
           bucket, not the window: the first call of a bucket takes the
           buckets that have left the window off the total (and deletes them
           when it charges), so the hash holds at most `buckets` of them plus
           the total; a refusal reads the oldest live buckets, until enough would
           have left, to work out its wait.
           A hash without a total (written before it was kept, or whose
           total is more than `buckets` behind) is summed field by field once
           (HGETALL) and the total written with the charge. The time is the
           server's (the TIME the script reads anyway for GCRA), never the
           caller's: every instance then agrees which bucket is today's and
           which have left the window, however their clocks drift around
           midnight, and the decision, the wait and the expiry are those of
           fixed-window.lua's rolling mode (which also reads TIME).
Field names are the caller's (the design names them after the rule's key,
e.g. "req:pro", "quota"): stable when rules are added or reordered. A rolling
limit's field must not be another field's name followed by ':' and digits.

Size: Redis keeps a hash as a listpack while it has at most
hash-max-listpack-entries fields (128 by default) and no name or value longer
than hash-max-listpack-value (64 bytes). A 30-day quota's 30 buckets beside a
few buckets and counters fit with room to spare. Past that (a window of
more than about 120 days beside other limits, or a lowered setting), Redis
converts the hash to a hashtable for the rest of the key's life: the answers
are the same, each field costs several times the memory. The design keeps
such a quota in a key of its own.
Cost: a rolling window costs about what a counter does (two fields read,
two written), plus one read of the buckets that left, once per bucket, and a
read of the live buckets on a refusal.

Returns {denied_by, then per limit its values}, all integers (no remaining/
reset for buckets and counters: the caller knows each limit and works them
out from v):
  denied_by  0 admitted (every limit charged), else the 1-based index of the
             first limit that refuses (nothing charged anywhere)
  GCRA       1 value: microseconds the bucket is ahead of now after this
             decision (admitted), or before it (denied); 0 = a full bucket
  counter    1 value: units used in the window after this decision
             (admitted), or before it (denied)
  rolling    3 values: units used in the window after this decision
             (admitted) or before it (denied); then the ms until enough old
             usage leaves the window for this request (0 when it fits, -1
             when cost > limit: never), never early: counted from the
             server's now to the moment the freeing bucket leaves; then the
             ms until the newest live bucket leaves the window (reset; 0 when
             nothing is counted)
From a GCRA value v: remaining = floor((tolerance - v) / T), reset =
ceil(v / 1000) ms; a refused bucket's retry_after is
ceil((v + increment - tolerance) / 1000) ms (-1 when increment > tolerance).

TTL: the hash always has one, and it only ever moves later: an admission
makes it at least the moment the state it wrote stops mattering (a bucket:
when it is full again; a counter: its window's end, or now if that has
passed, plus 60 s of slack for the callers' clocks; a rolling window: when
its newest bucket leaves the window), and leaves a later expiry alone, so a
call that touches some limits never cuts the others' state short. As every
write extends it so, the expiry already covers what the fields held before:
when the new state reaches no further (a bucket beside a quota's longer
window), the TTL is not even read. The price, as for gcra.lua: anything else
that changes this key's TTL (PERSIST, EXPIRE) breaks that. A denial writes
nothing.
]]
-- (Redis 7 replicates a script's effects only; 5 and 6 by default, and this asks for it there)
if not redis.REDIS_VERSION_NUM and redis.replicate_commands then redis.replicate_commands() end

local SLACK_MS = 60000
local key = KEYS[1]
if #KEYS ~= 1 then return redis.error_reply('ERR identity-limits.lua: want 1 key (the identity hash)') end

-- the limits: field, kind and numbers (4 arguments for a bucket, 5 for a counter, 6 for a rolling window)
local fields, kinds, x, y, z, w = {}, {}, {}, {}, {}, {}
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
  elseif kind == 'r' then
    x[n], y[n], z[n], w[n] = tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3]), tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    if not (x[n] and y[n] and z[n] and w[n] and x[n] >= 1 and x[n] < 1e9 and y[n] >= 1 and z[n] >= 1 and z[n] == math.floor(z[n]) and w[n] >= 1) then
      return redis.error_reply('ERR identity-limits.lua: limit ' .. n .. ' wants 1<=limit<1e9, bucket_ms>=1, whole buckets>=1, cost>=1')
    end
    a = a + 6
  else
    return redis.error_reply("ERR identity-limits.lua: limit " .. n .. " kind must be 'g', 'w' or 'r'")
  end
end
if n < 1 or a ~= #ARGV + 1 then return redis.error_reply('ERR identity-limits.lua: want 1+ limits (field, kind, numbers)') end

local t = redis.call('TIME')
local now = t[1] * 1000000 + t[2]
local now_ms = math.floor(now / 1000)

-- the stored state, one HMGET: each bucket's and counter's field; for a rolling window its
-- running total and today's bucket. Only a rolling window whose total is missing (a hash from
-- before it was kept) or can not be rolled forward reads every field (HGETALL) and rebuilds it.
local names, slot, today, today_name, total = {}, {}, {}, {}, {}
for i = 1, n do
  names[#names + 1] = fields[i]
  slot[i] = #names
  if kinds[i] == 'r' then
    today[i] = math.floor(now_ms / y[i])
    today_name[i] = fields[i] .. ':' .. string.format('%d', today[i])
    names[#names + 1] = today_name[i]
  end
end
local got = redis.call('HMGET', key, unpack(names))
local stored, all = {}, nil
for i = 1, n do
  stored[i] = got[slot[i]]
  if kinds[i] == 'r' then
    -- the total: the oldest bucket id it counts, then the units in 9 digits
    local v, from, sum = stored[i], nil, nil
    if v and #v > 9 then from, sum = tonumber(string.sub(v, 1, -10)), tonumber(string.sub(v, -9)) end
    -- (rolled forward from `from` to the window's first bucket: at most `buckets` ids while the hash lives)
    if from and sum and today[i] - z[i] + 1 - from <= z[i] then
      total[i] = {from, sum, tonumber(got[slot[i] + 1]) or 0}
    elseif all == nil then
      all = redis.call('HGETALL', key)
    end
  end
end

local before, after, values, denied = {}, {}, {}, 0
-- rolling windows: the wait of each, its reset before and after this call, the stale buckets
local waits, reset_before, reset_after, stale = {}, {}, {}, {}
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
  elseif kinds[i] == 'w' then
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
  else
    local limit, bucket_ms, count, cost = x[i], y[i], z[i], w[i]
    local current = today[i]
    local oldest = current - count + 1
    local by_id, used, newest, in_current = {}, 0, nil, 0
    -- the oldest buckets first: the wait ends when the one that frees enough leaves
    local function wait_for()
      if cost > limit or newest == nil then return -1 end
      local need, freed = used + cost - limit, 0
      for id = oldest, newest do
        freed = freed + (by_id[id] or 0)
        if freed >= need then return (id + count) * bucket_ms - now_ms end
      end
      return -1
    end
    if total[i] then
      -- the running total: roll it forward past the buckets that have left the window since
      -- it was written (once per bucket: a day's first call), which go when this call charges
      local from
      from, used, in_current = total[i][1], total[i][2], total[i][3]
      if from < oldest then
        local gone = {}
        for id = from, oldest - 1 do gone[#gone + 1] = fields[i] .. ':' .. string.format('%d', id) end
        local counts = redis.call('HMGET', key, unpack(gone))
        for j = 1, #gone do
          if counts[j] then
            used = used - (tonumber(counts[j]) or 0)
            stale[#stale + 1] = gone[j]
          end
        end
        if used < 0 then used = 0 end
      end
      -- today's bucket leaves the window at (current + count) * bucket_ms: the expiry reached that far
      if in_current > 0 and (current + count) * bucket_ms > covered then covered = (current + count) * bucket_ms end
      before[i], after[i] = used, used + cost
      if after[i] > limit then
        -- refused: the wait needs the oldest live buckets and the reset the newest. When
        -- today's bucket has counted it is the newest, and the buckets are read oldest first,
        -- 8 at a time, only until those read free enough; else every live bucket, at once
        local upto, batch = current, count
        if in_current > 0 then
          by_id[current], newest, upto, batch = in_current, current, current - 1, 8
        end
        local need, freed, id = after[i] - limit, 0, oldest
        while id <= upto and (batch == count or freed < need) do
          local last = math.min(upto, id + batch - 1)
          local names = {}
          for b = id, last do names[#names + 1] = fields[i] .. ':' .. string.format('%d', b) end
          local counts = redis.call('HMGET', key, unpack(names))
          for j = 1, #names do
            local c = tonumber(counts[j])
            if c and c > 0 then
              by_id[id + j - 1] = c
              freed = freed + c
              if newest == nil or id + j - 1 > newest then newest = id + j - 1 end
            end
          end
          id = last + 1
        end
      end
    else
      -- every field (HGETALL): the buckets named field:<id>, counted by id (live) or to delete (stale)
      local prefix = fields[i] .. ':'
      local from = #prefix + 1
      for j = 1, #all, 2 do
        local name = all[j]
        local id = string.find(name, prefix, 1, true) == 1 and string.find(name, '^%d+$', from) and tonumber(string.sub(name, from))
        if id then
          -- bucket id leaves the window at (id + count) * bucket_ms: the expiry reached that far
          if (id + count) * bucket_ms > covered then covered = (id + count) * bucket_ms end
          if id < oldest then
            stale[#stale + 1] = name
          else
            local c = tonumber(all[j + 1]) or 0
            by_id[id] = (by_id[id] or 0) + c
            used = used + c
            if newest == nil or id > newest then newest = id end
            if id == current then in_current = c end
          end
        end
      end
      before[i], after[i] = used, used + cost
    end
    reset_before[i] = newest and (newest + count) * bucket_ms - now_ms or 0
    if after[i] > limit then
      if denied == 0 then denied = i end
      waits[i] = wait_for()
    else
      waits[i] = 0
      -- today's bucket, and the total from the window's first bucket on
      values[i] = {today_name[i], string.format('%d', in_current + cost), string.format('%d%09d', oldest, after[i])}
      local e = ((newest and newest > current) and newest or current) + count
      e = e * bucket_ms
      reset_after[i] = e - now_ms
      if e > expire_at then expire_at = e end
    end
  end
end

-- the reply: each limit's state after this call, or (denied) before it, as nothing is written
local reply = {denied}
local state, reset = after, reset_after
if denied > 0 then state, reset = before, reset_before end
for i = 1, n do
  reply[#reply + 1] = state[i]
  if kinds[i] == 'r' then
    reply[#reply + 1] = waits[i]
    reply[#reply + 1] = reset[i]
  end
end
if denied > 0 then return reply end

if #stale > 0 then redis.call('HDEL', key, unpack(stale)) end
local set = {}
for i = 1, n do
  if kinds[i] == 'r' then
    set[#set + 1], set[#set + 2] = values[i][1], values[i][2]
    set[#set + 1], set[#set + 2] = fields[i], values[i][3]
  else
    set[#set + 1], set[#set + 2] = fields[i], values[i]
  end
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
return reply
