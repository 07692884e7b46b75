-- Reentrant extend: if this hold is in the hash, raise the hash's TTL to
-- ARGV[2] when that is longer; never shorten it, for the hash carries every
-- hold of the owner and another hold may need the longer TTL. Never
-- creates the hash or a hold.
-- KEYS[1] the hold's tombstone (unused); KEYS[2] hash. ARGV[1] hold id;
-- ARGV[2] TTL in milliseconds.
-- Returns 1 if the hold is here (the TTL is now at least ARGV[2]), 0
-- otherwise.
if redis.call('HEXISTS', KEYS[2], 'h:' .. ARGV[1]) == 1 then
  if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[2], ARGV[2])
  end
  return 1
end
return 0
