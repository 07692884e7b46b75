-- redlock unlock --token: remove one holder's hold of a lock, whatever its
-- kind, and tell waiters. The compare-and-delete of redlock/scripts/
-- release.lua (plain and fenced locks, a read-write lock's writer), widened
-- to the other holders a token names: a reentrant owner's holds (all of
-- them: the hash, whose field 'owner' names the owner, goes) and a reader.
-- KEYS[1] the lock key, KEYS[2] "{key}:w", KEYS[3] "{key}:r".
-- ARGV[1] the token (a reentrant lock's owner); ARGV[2] release channel.
-- Returns the names of what it removed: "lock", "reentrant", "writer",
-- "reader".
local removed = {}
local t = redis.call('TYPE', KEYS[1])['ok']
if t == 'string' and redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  table.insert(removed, 'lock')
elseif t == 'hash' and redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  table.insert(removed, 'reentrant')
end
if redis.call('GET', KEYS[2]) == ARGV[1] then
  redis.call('DEL', KEYS[2])
  table.insert(removed, 'writer')
end
if redis.call('ZREM', KEYS[3], ARGV[1]) == 1 then
  table.insert(removed, 'reader')
end
if #removed > 0 then
  redis.call('PUBLISH', ARGV[2], '1')
end
return removed
