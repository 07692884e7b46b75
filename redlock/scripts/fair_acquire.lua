-- Fair lock acquire, atomically on one master:
--  1. drop the registrations whose expiry passed (a crashed waiter's);
--  2. register this waiter, or refresh its registration: queue member
--     ARGV[3] with score ARGV[4] (its ticket), expiry now + ARGV[5] ms, and
--     raise the ticket counter to at least the ticket (the write-back of
--     the draw);
--  3. grant only when this waiter is the lowest live registration here
--     (ticket, then id, the same order on every master) and the lock key
--     is free: SET NX PX, as a plain lock. The lock key alone excludes a
--     second holder; the queue only orders the waiters.
-- The registration stays after a grant: a failed attempt keeps its place,
-- and the holder's Unlock (fair_release.lua) or its expiry removes it.
-- KEYS[1] lock key, KEYS[2] queue (sorted set: id -> ticket), KEYS[3]
-- expiries (sorted set: id -> expiry in server ms), KEYS[4] ticket counter,
-- KEYS[5] when given the fencing counter: a grant INCRs it and returns it.
-- ARGV[1] token; ARGV[2] TTL in ms; ARGV[3] waiter id; ARGV[4] ticket;
-- ARGV[5] registration lifetime in ms. Returns 0 when refused.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reg = tonumber(ARGV[5])
local gone = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[2], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
redis.call('ZADD', KEYS[3], now + reg, ARGV[3])
if tonumber(redis.call('GET', KEYS[4]) or '0') < tonumber(ARGV[4]) then
  redis.call('SET', KEYS[4], ARGV[4])
end
for i = 2, 4 do
  if redis.call('PTTL', KEYS[i]) < reg then
    redis.call('PEXPIRE', KEYS[i], reg)
  end
end
if redis.call('ZRANGE', KEYS[2], 0, 0)[1] ~= ARGV[3] then
  return 0
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
if #KEYS > 4 then
  return redis.call('INCR', KEYS[5])
end
return 1
