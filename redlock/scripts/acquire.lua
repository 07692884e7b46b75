-- Plain acquire: SET NX PX, unless this attempt was released already.
-- KEYS[1] this attempt's tombstone; KEYS[2] lock key.
-- ARGV[1] token; ARGV[2] TTL in milliseconds.
-- Returns 1 if granted, 0 otherwise (held, or the attempt's release came
-- first: a late acquire never lands after its release).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0
