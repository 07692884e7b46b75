-- Compare-and-PEXPIRE: extend the lock key only if it still holds our token.
-- Never creates the key: an expired lock is not resurrected.
-- KEYS[1] the attempt's tombstone (unused); KEYS[2] lock key.
-- ARGV[1] token; ARGV[2] new TTL in milliseconds.
-- Returns 1 if extended, 0 otherwise.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 0
