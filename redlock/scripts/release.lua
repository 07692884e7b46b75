-- Compare-and-delete: remove the lock key only if it still holds our token,
-- and tell waiters (wake on release). When the key is not ours, our acquire
-- may still be on its way: leave a tombstone that refuses it.
-- KEYS[1] the attempt's tombstone; KEYS[2] lock key; KEYS[3] the holder
-- record when ARGV[4] is 'record' (further keys unused).
-- ARGV[1] token; ARGV[2] release channel ('' for none: the clean-up of a
-- failed attempt announces nothing, or its own waiter would wake itself);
-- ARGV[3] the tombstone's lifetime in milliseconds; ARGV[4] 'record' for a
-- lock with a holder record (WithMetadata).
-- Returns 1 if deleted, 0 otherwise.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  if ARGV[4] == 'record' then
    redis.call('DEL', KEYS[3])
  end
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
  return 1
end
redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
return 0
