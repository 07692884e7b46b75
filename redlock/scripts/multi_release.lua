-- Multi-key release: compare-and-delete of each key on its own, so a key
-- that another client holds by now is left alone, and tell the waiters of
-- each deleted key (wake on release).
-- KEYS the lock keys; ARGV[1] token; ARGV[2] '' to announce nothing (the
-- clean-up of a failed attempt: its own waiter would wake itself), else
-- anything; ARGV[3] the release channels' prefix (a key's channel is the
-- prefix followed by the key).
-- Returns the number of keys deleted.
local n = 0
for i = 1, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    n = n + 1
    if ARGV[2] ~= '' then
      redis.call('PUBLISH', ARGV[3] .. KEYS[i], '1')
    end
  end
end
return n
