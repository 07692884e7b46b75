-- Acquire with a fencing token: SET NX PX, and on success INCR the key's
-- persistent fencing counter and return it (always >= 1).
-- KEYS[1] lock key; KEYS[2] fencing counter (same hash tag);
-- ARGV[1] token; ARGV[2] TTL in milliseconds. Returns 0 if refused.
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0
