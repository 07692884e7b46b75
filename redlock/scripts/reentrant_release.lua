-- Reentrant release: remove this hold; the owner's last hold deletes the
-- hash and tells waiters. A hold is released once: a second release, or a
-- stale one (the hold expired and the owner holds the lock afresh), finds
-- no field of its own and counts down nothing. When the hold is not here,
-- its acquire may still be on its way: leave a tombstone that refuses it.
-- KEYS[1] the hold's tombstone; KEYS[2] hash. ARGV[1] hold id; ARGV[2]
-- release channel ('' for none); ARGV[3] the tombstone's lifetime in ms.
-- Returns 1 if this hold was here, 0 otherwise.
if redis.call('HDEL', KEYS[2], 'h:' .. ARGV[1]) == 0 then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
  return 0
end
if redis.call('HLEN', KEYS[2]) <= 1 then
  redis.call('DEL', KEYS[2])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
end
return 1
