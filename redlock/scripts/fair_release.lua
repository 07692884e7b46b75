-- Fair lock release: compare-and-delete the lock key, as a plain lock
-- (with a tombstone for our attempt when the key is not ours). An Unlock
-- (ARGV[2] set) also removes the holder's registration, which stayed while
-- it held the lock, leaves the waiter's tombstone (a late acquire of one of
-- its attempts must not register it again) and tells the waiters.
-- The clean-up of a failed attempt (ARGV[2] '') only deletes the lock key:
-- the waiter goes on waiting and keeps its place in the queue.
-- KEYS as fair_acquire.lua. ARGV[1] token; ARGV[2] release channel (''
-- for none); ARGV[3] the tombstones' lifetime in ms; ARGV[4] waiter id.
-- Returns 1 if the lock key was ours.
local released = 0
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  released = 1
else
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
end
if ARGV[2] == '' then
  return released
end
local first = redis.call('ZRANGE', KEYS[3], 0, 0)[1] == ARGV[4]
local removed = redis.call('ZREM', KEYS[3], ARGV[4])
redis.call('ZREM', KEYS[4], ARGV[4])
redis.call('SET', KEYS[6], '1', 'PX', ARGV[3])
if released == 1 or (removed == 1 and first) then
  redis.call('PUBLISH', ARGV[2], '1')
end
return released
