-- Fair lock release: compare-and-delete the lock key, as a plain lock.
-- An Unlock (ARGV[2] set) also removes the holder's registration, which
-- stayed while it held the lock, and tells the waiters.
-- The clean-up of a failed attempt (ARGV[2] '') only deletes the lock key:
-- the waiter goes on waiting and keeps its place in the queue.
-- KEYS[1] lock key, KEYS[2] queue, KEYS[3] expiries (see fair_acquire.lua;
-- further keys unused); ARGV[1] token; ARGV[2] release channel ('' for
-- none); ARGV[3] waiter id. Returns 1 if the lock key was ours.
local released = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  released = 1
end
if ARGV[2] == '' then
  return released
end
local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1] == ARGV[3]
local removed = redis.call('ZREM', KEYS[2], ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[3])
if released == 1 or (removed == 1 and first) then
  redis.call('PUBLISH', ARGV[2], '1')
end
return released
