-- Multi-key acquire: all of the lock keys or none, with one token. Every
-- key is set (SET PX) only when none of them exists (and this attempt was
-- not released already); otherwise nothing is set.
-- KEYS[1] the attempt's tombstone (in the first key's hash slot); KEYS[2..]
-- the lock keys. ARGV[1] token; ARGV[2] TTL in milliseconds.
-- Returns 1 if every key was set, 0 if not (nothing set).
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
for i = 2, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    return 0
  end
end
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
return 1
