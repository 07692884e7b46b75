-- Reentrant extend: PEXPIRE the hash if this owner holds it; the hold count
-- is kept. Never creates the hash.
-- KEYS[1] hash; ARGV[1] owner; ARGV[2] TTL in milliseconds.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
