-- Multi-key release: compare-and-delete of each key on its own, so a key
-- that another client holds by now is left alone, and tell the waiters of
-- each deleted key (wake on release). When no key was ours, our acquire may
-- still be on its way: leave a tombstone that refuses it.
-- KEYS[1] the attempt's tombstone; KEYS[2..] the lock keys. ARGV[1] token;
-- ARGV[2] '' to announce nothing (the clean-up of a failed attempt: its
-- own waiter would wake itself), else anything; ARGV[3] the tombstone's
-- lifetime in ms; ARGV[4] the release channels' prefix (a key's channel is
-- the prefix followed by the key).
-- Returns the number of keys deleted.
local n = 0
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[1] then
    redis.call('DEL', KEYS[i])
    n = n + 1
    if ARGV[2] ~= '' then
      redis.call('PUBLISH', ARGV[4] .. KEYS[i], '1')
    end
  end
end
if n == 0 then
  redis.call('SET', KEYS[1], '1', 'PX', ARGV[3])
end
return n
