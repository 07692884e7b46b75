-- Reentrant acquire: the hash KEYS[1] maps owner -> hold count. Granted when
-- the hash is absent or already held by this owner; the TTL is never
-- shortened by a nested acquire.
-- KEYS[2], when given, is the fencing counter (same hash tag): the owner's
-- first hold on this master INCRs it, a nested hold reads it, and the reply
-- is the counter instead of the hold count.
-- ARGV[1] owner; ARGV[2] TTL in milliseconds. Returns the new hold count
-- (or the counter), or 0 when another owner holds the lock.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  if #KEYS < 2 then
    return n
  end
  local f = tonumber(redis.call('GET', KEYS[2]) or '0')
  if n == 1 or f < 1 then
    f = redis.call('INCR', KEYS[2])
  end
  return f
end
return 0
