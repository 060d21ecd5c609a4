--[[ penalty.lua - the penalty box: count a caller's refusals, and block the
caller for a while once there were too many within a window.

KEYS[1]  refusal counter, e.g. "rl:{pb:ip:203.0.113.7}:strikes"
KEYS[2]  box key, e.g. "rl:{pb:ip:203.0.113.7}:box" (same hash tag as the
         counter, so both live on one Redis Cluster slot)
ARGV[1]  'check' (only read the box) or 'strike' (count one refusal)
ARGV[2]  refusals    refusals within the window that shut the box (integer >= 1)
ARGV[3]  window_ms   lifetime of the counter, from the refusal that creates it
ARGV[4]  block_ms    how long the box stays shut
Returns {boxed, ms_left}, both integers: boxed 1 with the ms until the box
opens again, or {0, 0}.
TTL: every key this script writes has one. The counter gets PEXPIRE
window_ms from the refusal that creates it (and whenever it is found without
one); the box is written with SET PX block_ms, and the counter is deleted
when the box shuts. There is no redis.call('TIME') here: both lifetimes are
relative, so only Redis's own clock matters.
]]
local left = redis.call('PTTL', KEYS[2])
if left > 0 then
  return {1, left}
end
if ARGV[1] ~= 'strike' then
  return {0, 0}
end
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
if n >= tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
  redis.call('DEL', KEYS[1])
  return {1, tonumber(ARGV[4])}
end
return {0, 0}
