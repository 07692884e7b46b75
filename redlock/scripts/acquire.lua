-- Plain acquire: SET NX PX, unless this attempt was released already.
-- KEYS[1] this attempt's tombstone; KEYS[2] lock key; KEYS[3], with
-- WithMetadata, the holder record (layout.Holder).
-- ARGV[1] token; ARGV[2] TTL in milliseconds; ARGV[3..] the record's
-- fields, as field, value pairs.
-- Returns 1 if granted, 0 otherwise (held, or the attempt's release came
-- first: a late acquire never lands after its release).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if KEYS[3] then
    redis.call('DEL', KEYS[3])
    redis.call('HSET', KEYS[3], 'token', ARGV[1], unpack(ARGV, 3))
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
  end
  return 1
end
return 0
