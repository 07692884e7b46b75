-- redlock run's holder record: who holds the lock, kept beside the lock key
-- (layout.Holder) where, and only where, this master holds the lock with
-- our token, and expiring with the lock key there: so a record never
-- outlives its lock by more than a renewal, and never names a lock that
-- is not ours.
-- KEYS[1] the lock key; KEYS[2], when given, the record. ARGV[1] token;
-- ARGV[2..] the record's other fields, as field, value pairs.
-- Returns 1 when this master holds the lock with the token, else 0.
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' or redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
local ttl = redis.call('PTTL', KEYS[1])
if KEYS[2] and ttl > 0 then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'token', ARGV[1], unpack(ARGV, 2))
  redis.call('PEXPIRE', KEYS[2], ttl)
end
return 1
