-- Fair lock, a waiter gives up: remove its registration, and when it was
-- the first in line, tell the other waiters (they may be next).
-- KEYS[1] queue, KEYS[2] expiries (see fair_acquire.lua); ARGV[1] waiter
-- id; ARGV[2] release channel ('' for none). Returns 1.
local first = redis.call('ZRANGE', KEYS[1], 0, 0)[1] == ARGV[1]
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if removed == 1 and first and ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[2], '1')
end
return 1
