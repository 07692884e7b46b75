-- Acquire with a fencing token: SET NX PX, and on success raise the key's
-- fencing counter and return it (see below).
-- KEYS[1] this attempt's tombstone; KEYS[2] lock key; with WithMetadata
-- KEYS[3] the holder record (layout.Holder); last, the fencing counter
-- (same hash tag). ARGV[1] token; ARGV[2] TTL in milliseconds; ARGV[3]
-- the counter's lifetime in ms; ARGV[4..] the record's fields, as field,
-- value pairs.
-- Returns 0 if refused (held, or the attempt was released already).
-- The fencing counter is raised to max(counter + 1, the master's clock in
-- microseconds), and expires ARGV[3] ms after its last use: a counter
-- lost in a restart (or expired) comes back above every token issued
-- before, as long as the masters' clocks do not step back, or disagree, by
-- more than that restart took (see redlock/fence.go).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
if not redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 0
end
if #KEYS == 4 then
  redis.call('DEL', KEYS[3])
  redis.call('HSET', KEYS[3], 'token', ARGV[1], unpack(ARGV, 4))
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
local fk = KEYS[#KEYS]
local c = tonumber(redis.call('GET', fk) or '0')
local t = redis.call('TIME')
local f = math.max(c + 1, tonumber(t[1]) * 1000000 + tonumber(t[2]))
redis.call('SET', fk, f, 'PX', ARGV[3])
return f
