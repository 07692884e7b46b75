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
-- Nothing happens when this attempt was released already, or the waiter
-- left or unlocked (their tombstones): a late acquire neither takes the
-- lock nor registers a waiter that is gone.
-- KEYS[1] the attempt's tombstone; KEYS[2] lock key; KEYS[3] queue (sorted
-- set: id -> ticket); KEYS[4] expiries (sorted set: id -> expiry in server
-- ms); KEYS[5] ticket counter; KEYS[6] the waiter's tombstone; KEYS[7] when
-- given the fencing counter: a grant raises it (as fence_acquire.lua does)
-- and returns it.
-- ARGV[1] token; ARGV[2] TTL in ms; ARGV[3] waiter id; ARGV[4] ticket;
-- ARGV[5] registration lifetime in ms; ARGV[6] the fencing counter's
-- lifetime in ms. Returns 0 when refused.
if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[6]) == 1 then
  return 0
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reg = tonumber(ARGV[5])
local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[3], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[3])
redis.call('ZADD', KEYS[4], now + reg, ARGV[3])
if tonumber(redis.call('GET', KEYS[5]) or '0') < tonumber(ARGV[4]) then
  redis.call('SET', KEYS[5], ARGV[4])
end
for i = 3, 5 do
  if redis.call('PTTL', KEYS[i]) < reg then
    redis.call('PEXPIRE', KEYS[i], reg)
  end
end
if redis.call('ZRANGE', KEYS[3], 0, 0)[1] ~= ARGV[3] then
  return 0
end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
if #KEYS < 7 then
  return 1
end
local c = tonumber(redis.call('GET', KEYS[7]) or '0')
local t = redis.call('TIME')
local f = math.max(c + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', KEYS[7], f, 'PX', ARGV[6])
return f
