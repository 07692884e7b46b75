-- Read lock acquire. KEYS[1] writer key, KEYS[2] readers (sorted set:
-- token -> expiry in server milliseconds), KEYS[3] waiting writer.
-- ARGV[1] reader token; ARGV[2] TTL in milliseconds.
-- Expired readers are dropped first, so each reader expires on its own.
-- Refused while a writer holds the lock or waits for it (writer preference).
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then
  return 0
end
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
