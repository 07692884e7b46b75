-- Raise the fencing counter to at least ARGV[1]: counter = max(counter, v),
-- and keep it ARGV[2] ms from now (see fence_acquire.lua).
-- KEYS[1] fencing counter; ARGV[1] the fencing token of the new holder;
-- ARGV[2] the counter's lifetime in ms.
local v = tonumber(ARGV[1])
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < v then
  c = v
end
redis.call('SET', KEYS[1], c, 'PX', ARGV[2])
return 1
