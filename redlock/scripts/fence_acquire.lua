-- Acquire with a fencing token: SET NX PX, and on success INCR the key's
-- persistent fencing counter and return it (always >= 1).
-- KEYS[1] this attempt's tombstone; KEYS[2] lock key; KEYS[3] fencing
-- counter (same hash tag). ARGV[1] token; ARGV[2] TTL in milliseconds.
-- Returns 0 if refused (held, or the attempt was released already).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[3])
end
return 0
