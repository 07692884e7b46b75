-- Read lock release: remove this reader; when the last reader goes, tell
-- waiting writers. When the reader is not here, its acquire may still be
-- on its way: leave a tombstone that refuses it.
-- KEYS[1] the attempt's tombstone; KEYS[3] readers (sorted set; KEYS[2]
-- and KEYS[4] unused here). ARGV[1] reader token; ARGV[2] release channel
-- ('' for none); ARGV[3] the tombstone's lifetime in ms.
-- Returns 1 if this reader was here, 0 otherwise.
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
  return 0
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
end
return 1
