-- Multi-key acquire: all of KEYS or none, with one token. Every key is set
-- (SET PX) only when none of them exists; otherwise nothing is set.
-- KEYS the lock keys; ARGV[1] token; ARGV[2] TTL in milliseconds.
-- Returns 1 if every key was set, 0 if any was held (nothing set).
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return 0
  end
end
for i = 1, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return 1
