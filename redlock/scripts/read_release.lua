-- Read lock release: remove this reader; when the last reader goes, tell
-- waiting writers.
-- KEYS[2] readers (sorted set; KEYS[1] and KEYS[3] unused here);
-- ARGV[1] reader token; ARGV[2] release channel ('' for none).
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
end
return 1
