-- Write lock release: delete the writer key if it holds our token, and the
-- waiting-writer mark if it is ours (it can outlive our acquisition on a
-- master that still had readers when we won on the others).
-- KEYS[1] writer key, KEYS[3] waiting writer; ARGV[1] token; ARGV[2]
-- release channel ('' for none: the clean-up of a failed attempt
-- announces nothing, or its own waiter would wake itself); ARGV[3] writer id. Returns 1 if the writer key was ours.
if redis.call('GET', KEYS[3]) == ARGV[3] then
  redis.call('DEL', KEYS[3])
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then
    redis.call('PUBLISH', ARGV[2], '1')
  end
  return 1
end
return 0
