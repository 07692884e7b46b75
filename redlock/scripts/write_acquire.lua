-- Write lock acquire. KEYS[1] the attempt's tombstone; KEYS[2] writer key;
-- KEYS[3] readers (sorted set); KEYS[4] waiting writer; KEYS[5], when
-- given, the fencing counter (same hash tag): a grant raises it (as
-- fence_acquire.lua does) and returns it. ARGV[1] token of this attempt;
-- ARGV[2] TTL in milliseconds; ARGV[3] id of the waiting writer (the same
-- across its attempts); ARGV[4] the counter's lifetime in ms.
-- While readers remain, the writer announces itself in KEYS[4] so that no
-- new reader gets in (writer preference), and is refused. Another waiting
-- writer comes first. An attempt released already changes nothing.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
local waiting = redis.call('GET', KEYS[4])
if waiting and waiting ~= ARGV[3] then
  return 0
end
if redis.call('ZCARD', KEYS[3]) > 0 then
  redis.call('SET', KEYS[4], ARGV[3], 'PX', ARGV[2])
  return 0
end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if waiting then
  redis.call('DEL', KEYS[4])
end
if #KEYS < 5 then
  return 1
end
local c = tonumber(redis.call('GET', KEYS[5]) or '0')
local t = redis.call('TIME')
local f = math.max(c + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[5], f, 'PX', ARGV[4])
return f
