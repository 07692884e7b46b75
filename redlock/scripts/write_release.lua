-- Write lock release: delete the writer key if it holds our token, and the
-- waiting-writer mark if it is ours (it can outlive our acquisition on a
-- master that still had readers when we won on the others). When the
-- writer key is not ours, our acquire may still be on its way: leave a
-- tombstone that refuses it.
-- KEYS[1] the attempt's tombstone; KEYS[2] writer key; KEYS[4] waiting
-- writer. ARGV[1] token; ARGV[2] release channel ('' for none); ARGV[3] the
-- tombstone's lifetime in ms; ARGV[4] writer id.
-- Returns 1 if the writer key was ours.
if redis.call('GET', KEYS[4]) == ARGV[4] then
  redis.call('DEL', KEYS[4])
end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
  return 1
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
return 0
