-- Write lock acquire. KEYS[1] writer key, KEYS[2] readers (sorted set),
-- KEYS[3] waiting writer. ARGV[1] token of this attempt; ARGV[2] TTL in
-- milliseconds; ARGV[3] id of the waiting writer (the same across its
-- attempts). KEYS[4], when given, is the fencing counter (same hash tag):
-- a grant INCRs it and returns it.
-- While readers remain, the writer announces itself in KEYS[3] so that no
-- new reader gets in (writer preference), and is refused. Another waiting
-- writer comes first.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local waiting = redis.call('GET', KEYS[3])
if waiting and waiting ~= ARGV[3] then
  return 0
end
if redis.call('ZCARD', KEYS[2]) > 0 then
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[2])
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if waiting then
  redis.call('DEL', KEYS[3])
end
if #KEYS > 3 then
  return redis.call('INCR', KEYS[4])
end
return 1
