-- Reentrant acquire: the hash KEYS[1] maps owner -> hold count. Granted when
-- the hash is absent or already held by this owner; the TTL is never
-- shortened by a nested acquire.
-- ARGV[1] owner; ARGV[2] TTL in milliseconds. Returns the new hold count,
-- or 0 when another owner holds the lock.
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  local n = redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return n
end
return 0
