-- Fair lock, keep a waiter's registration alive while it waits: move its
-- expiry to now + ARGV[2] ms. Never re-adds a registration that expired or
-- was removed (by its waiter giving up, or by its Unlock): a refresh that
-- lands late cannot bring a waiter back.
-- KEYS[1] queue, KEYS[2] expiries, KEYS[3] ticket counter (see
-- fair_acquire.lua); ARGV[1] waiter id; ARGV[2] registration lifetime in ms.
-- Returns 1 if refreshed, 0 when not registered here.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reg = tonumber(ARGV[2])
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[1], id)
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('ZADD', KEYS[2], now + reg, ARGV[1])
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < reg then
    redis.call('PEXPIRE', KEYS[i], reg)
  end
end
return 1
