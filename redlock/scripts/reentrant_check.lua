-- Reentrant check: how long this hold still stands, changing nothing.
-- KEYS[1] the hold's tombstone (unused); KEYS[2] hash. ARGV[1] hold id.
-- Returns the hash's remaining TTL in milliseconds where the hold is in
-- it (the hash carries every hold of the owner, and expires as one), 0
-- otherwise.
if redis.call('HEXISTS', KEYS[2], 'h:' .. ARGV[1]) == 1 then
  local ttl = redis.call('PTTL', KEYS[2])
  if ttl > 0 then
    return ttl
  end
end
return 0
