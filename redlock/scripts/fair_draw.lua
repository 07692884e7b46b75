-- Fair lock, draw a ticket: INCR the key's ticket counter on this master.
-- The waiter's ticket is the maximum over a quorum of masters, written back
-- by its registration (fair_acquire.lua), so that a waiter that draws after
-- another one registered on a quorum draws a greater ticket.
-- The counter lives as long as the registrations it numbers: it expires
-- ARGV[1] ms after its last use here, never sooner than any live
-- registration on this master.
-- KEYS[1] ticket counter; ARGV[1] registration lifetime in ms.
-- Returns the counter (>= 1).
local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
