-- Fair lock, a waiter gives up: remove its registration, leave its
-- tombstone (a late acquire of one of its attempts must not register it
-- again), and when it was the first in line, tell the other waiters (they
-- may be next).
-- KEYS as fair_acquire.lua. ARGV[2] release channel; ARGV[3] the
-- tombstone's lifetime in ms; ARGV[4] waiter id (ARGV[1] unused).
-- Returns 1 if the waiter was registered here.
local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1] == ARGV[4]
local removed = redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('SET', KEYS[6], '1', 'PX', ARGV[3])
if removed == 1 and first and ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[2], '1')
end
return removed
