-- Multi-key check: the shortest remaining TTL of the lock keys when every
-- one still holds our token, changing nothing.
-- KEYS[1] tombstone (unused); KEYS[2..] the lock keys. ARGV[1] token.
-- Returns that TTL in milliseconds, 0 when a key is gone, holds another
-- token or has no TTL.
local least = -1
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl <= 0 then
    return 0
  end
  if least < 0 or ttl < least then
    least = ttl
  end
end
if least < 0 then
  return 0
end
return least
