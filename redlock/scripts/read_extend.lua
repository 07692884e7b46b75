-- Read lock extend: move this reader's expiry. Never re-adds a reader that
-- expired or was released, and never extends one beside a writer: a writer
-- is granted only where no live reader remains, so a reader found here with
-- the writer key present can only be stale state.
-- KEYS[1] tombstone (unused); KEYS[2] writer key; KEYS[3] readers (sorted
-- set); KEYS[4] waiting writer (unused). ARGV[1] reader token; ARGV[2] TTL
-- in ms. Returns 1 if extended, 0 otherwise.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if not redis.call('ZSCORE', KEYS[3], ARGV[1]) or redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
