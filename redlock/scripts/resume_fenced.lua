-- Resume of a fenced lock: compare-and-PEXPIRE as extend.lua, and on
-- success the key's fencing counter seeded from the master's clock, as
-- fence_acquire.lua raises it: max(counter, the master's clock in
-- microseconds). The maximum over the resuming quorum, written back to it
-- (fence_raise.lua), serves as the resumed lock's fencing token: no lower
-- than the giver's, also where the giver's write-back of its token was
-- lost (a restart, a failover to a replica that had not received it).
-- Never creates the key.
-- KEYS[1] the token's tombstone (unused); KEYS[2] lock key; KEYS[3], when
-- there are four, the holder record (moved with the lock, and replaced
-- when ARGV[3..] give fields, as extend_record.lua does); the last the
-- fencing counter (same hash tag). ARGV[1] token; ARGV[2] new TTL in
-- milliseconds. Returns 0 if this master does not hold the key with the
-- token.
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  if #KEYS == 4 then
    if #ARGV > 2 then
      redis.call('DEL', KEYS[3])
      redis.call('HSET', KEYS[3], 'token', ARGV[1], unpack(ARGV, 3))
    end
    redis.call('PEXPIRE', KEYS[3], ARGV[2])
  end
  local t = redis.call('TIME')
  return math.max(tonumber(redis.call('GET', KEYS[#KEYS]) or '0'), tonumber(t[1]) * 1000000 + tonumber(t[2]))
end
return 0
