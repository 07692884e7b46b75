-- Reentrant extend: if this owner holds the hash, raise its TTL to ARGV[2]
-- when that is longer; never shorten it, for the hash carries every hold of
-- the owner and another hold may need the longer TTL. The hold count is
-- kept. Never creates the hash.
-- KEYS[1] hash; ARGV[1] owner; ARGV[2] TTL in milliseconds.
-- Returns 1 if this owner holds it (the TTL is now at least ARGV[2]), 0
-- otherwise.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
  end
  return 1
end
return 0
