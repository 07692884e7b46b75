-- Read lock check: how long this reader still holds the lock, changing
-- nothing (an expired reader is not pruned here). A reader found beside a
-- writer is stale state, as for read_extend.
-- KEYS[1] tombstone (unused); KEYS[2] writer key; KEYS[3] readers (sorted
-- set); KEYS[4] waiting writer (unused). ARGV[1] reader token.
-- Returns the reader's remaining time in milliseconds (its score, bounded
-- by the set's own TTL), 0 otherwise.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local score = redis.call('ZSCORE', KEYS[3], ARGV[1])
if not score then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local left = tonumber(score) - now
local ttl = redis.call('PTTL', KEYS[3])
if ttl < left then
  left = ttl
end
if left <= 0 then
  return 0
end
return left
