-- Extend of a lock with a holder record (WithMetadata): compare-and-PEXPIRE
-- as extend.lua, and the record with it, so that it expires with the lock;
-- a Resume with fields also replaces the record.
-- KEYS[1] the attempt's tombstone (unused); KEYS[2] lock key; KEYS[3] the
-- holder record (further keys unused). ARGV[1] token; ARGV[2] new TTL in
-- milliseconds; ARGV[3..], when given, the record's new fields, as field,
-- value pairs. Returns 1 if extended, 0 otherwise.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  if #ARGV > 2 then
    redis.call('DEL', KEYS[3])
    redis.call('HSET', KEYS[3], 'token', ARGV[1], unpack(ARGV, 3))
  end
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  return redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 0
