-- Compare-and-delete: remove the lock key only if it still holds our token,
-- and tell waiters (wake on release).
-- KEYS[1] lock key; ARGV[1] token; ARGV[2] release channel ('' for none: the clean-up of a failed attempt
-- announces nothing, or its own waiter would wake itself).
-- Returns 1 if deleted, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
  return 1
end
return 0
