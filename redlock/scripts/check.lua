-- Check: how long the lock key still holds our token, changing nothing.
-- KEYS[1] the acquisition's tombstone (unused); KEYS[2] lock key.
-- ARGV[1] token.
-- Returns the key's remaining TTL in milliseconds where it holds our token
-- (with a TTL), 0 otherwise.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then
    return ttl
  end
end
return 0
