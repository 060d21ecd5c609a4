--[[ reference-token-bucket.lua - the baseline the benchmark compares against (not shipped).

The straightforward token bucket: a hash holding
fractional tokens and the last refill time, read with HMGET, written back
with HSET and PEXPIRE on every call. As a limiter shared by many instances must, time
comes from redis.call('TIME') rather than from the caller, so it pays for
the same clock read as our scripts.

KEYS[1]  bucket key
ARGV[1]  capacity (burst), ARGV[2] refill rate (tokens/sec), ARGV[3] cost
Returns {allowed, tokens (string), retry_after_ms}
]]
local capacity = tonumber(ARGV[1])
local rate     = tonumber(ARGV[2])
local cost     = tonumber(ARGV[3])

local t = redis.call('TIME')
local now_ms = t[1] * 1000 + math.floor(t[2] / 1000)

local state  = redis.call('HMGET', KEYS[1], 'tokens', 'ts_ms')
local tokens = tonumber(state[1])
local ts_ms  = tonumber(state[2])
if tokens == nil then tokens = capacity; ts_ms = now_ms end

local elapsed = math.max(0, now_ms - ts_ms) / 1000.0
tokens = math.min(capacity, tokens + elapsed * rate)

local allowed = tokens >= cost
if allowed then tokens = tokens - cost end

redis.call('HSET', KEYS[1], 'tokens', tokens, 'ts_ms', now_ms)
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 60000)

local retry_after_ms = 0
if not allowed then retry_after_ms = math.ceil((cost - tokens) / rate * 1000) end
return { allowed and 1 or 0, tostring(tokens), retry_after_ms }
