-- redlock unlock --force: delete every key that holds or waits for a lock
-- (never the fencing counter, so that tokens keep growing), and tell
-- waiters.
-- KEYS: the lock key, "{key}:w", "{key}:r", "{key}:wq"; ARGV[1] release
-- channel. Returns the keys it deleted.
local removed = {}
for _, k in ipairs(KEYS) do
  if redis.call('DEL', k) == 1 then
    table.insert(removed, k)
  end
end
if #removed > 0 then
  redis.call('PUBLISH', ARGV[1], '1')
end
return removed
