-- Read lock acquire. KEYS[1] the attempt's tombstone; KEYS[2] writer key;
-- KEYS[3] readers (sorted set: token -> expiry in server milliseconds);
-- KEYS[4] waiting writer. ARGV[1] reader token; ARGV[2] TTL in milliseconds.
-- Expired readers are dropped first, so each reader expires on its own.
-- Refused while a writer holds the lock or waits for it (writer
-- preference), and when this attempt was released already.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[4]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[3]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 1
