-- Compare-and-delete: remove the lock key only if it still holds our token,
-- and tell waiters (wake on release). When the key is not ours, our acquire
-- may still be on its way: leave a tombstone that refuses it.
-- KEYS[1] the attempt's tombstone; KEYS[2] lock key (further keys unused).
-- ARGV[1] token; ARGV[2] release channel ('' for none: the clean-up of a
-- failed attempt announces nothing, or its own waiter would wake itself);
-- ARGV[3] the tombstone's lifetime in milliseconds.
-- Returns 1 if deleted, 0 otherwise.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
  return 1
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
return 0
