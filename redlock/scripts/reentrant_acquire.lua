-- Reentrant acquire: the hash KEYS[2] holds the owner (field 'owner') and
-- one field 'h:<hold id>' per hold of that owner. Granted when the hash is
-- absent or held by this owner, unless this hold was released already (its
-- tombstone KEYS[1] exists: a late acquire never lands after its release).
-- The TTL is never shortened by a nested acquire. A hash without an
-- 'owner' field is no reentrant lock of ours: refused.
-- KEYS[3], when given, is the fencing counter (same hash tag): the owner's
-- first hold on this master raises it (as fence_acquire.lua does), a nested
-- hold reads it, seeded from the master's clock (max(counter, clock in
-- microseconds): a counter that lost the first hold's write-back, in a
-- restart or a failover, comes back above it), and the reply is the
-- counter instead of the hold count.
-- ARGV[1] hold id; ARGV[2] TTL in milliseconds; ARGV[3] owner; ARGV[4],
-- with KEYS[3], the counter's lifetime in ms.
-- Returns the owner's hold count here (or the counter), or 0 if refused.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
local holder = redis.call('HGET', KEYS[2], 'owner')
if holder then
  if holder ~= ARGV[3] then
    return 0
  end
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
redis.call('HSET', KEYS[2], 'owner', ARGV[3], 'h:' .. ARGV[1], '1')
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
local n = redis.call('HLEN', KEYS[2]) - 1
if #KEYS < 3 then
  return n
end
local f = tonumber(redis.call('GET', KEYS[3]) or '0')
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
if holder and f >= 1 then
  return math.max(f, now)
end
f = math.max(f + 1, now)
redis.call('SET', KEYS[3], f, 'PX', ARGV[4])
return f
