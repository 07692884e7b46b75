-- Resume of a fenced lock: compare-and-PEXPIRE as extend.lua, and on
-- success the key's fencing counter (at least 1), so that the maximum over
-- the resuming quorum, written back to it (fence_raise.lua), serves as the
-- resumed lock's fencing token. Never creates the key.
-- KEYS[1] the token's tombstone (unused); KEYS[2] lock key; KEYS[3]
-- fencing counter (same hash tag). ARGV[1] token; ARGV[2] new TTL in
-- milliseconds. Returns 0 if this master does not hold the key with the
-- token.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return math.max(tonumber(redis.call('GET', KEYS[3]) or '0'), 1)
end
return 0
