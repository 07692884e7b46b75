-- Reentrant release: decrement this owner's hold count; the last release
-- deletes the hash and tells waiters.
-- KEYS[1] hash; ARGV[1] owner; ARGV[2] release channel ('' for none: the clean-up of a failed attempt
-- announces nothing, or its own waiter would wake itself).
-- Returns 1 if this owner held it, 0 otherwise.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then
  return 0
end
if redis.call('HINCRBY', KEYS[1], ARGV[1], -1) <= 0 then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
end
return 1
