-- Read lock extend: move this reader's expiry; never re-adds a reader that
-- expired or was released.
-- KEYS[2] readers (sorted set; KEYS[1] and KEYS[3] unused here);
-- ARGV[1] reader token; ARGV[2] TTL in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
