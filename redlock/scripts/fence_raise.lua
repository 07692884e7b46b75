-- Raise the fencing counter to at least ARGV[1]: counter = max(counter, v).
-- KEYS[1] fencing counter; ARGV[1] the fencing token of the new holder.
local v = tonumber(ARGV[1])
local c = tonumber(redis.call('GET', KEYS[1]) or '0')
if c < v then
  redis.call('SET', KEYS[1], v)
end
return 1
