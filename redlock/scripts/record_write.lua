-- Lock.SetMetadata: replace the holder record of a lock acquired with
-- WithMetadata, where, and only where, this master holds the lock with our
-- token (a reentrant lock: with our hold, the record naming the owner),
-- expiring with the lock key there; announce the change.
-- KEYS[1] the attempt's tombstone (unused); KEYS[2] lock key (a string, or
-- a reentrant lock's hash); KEYS[3] the holder record (further keys
-- unused). ARGV[1] token (a reentrant lock: the hold id); ARGV[2] the
-- channel to announce on ('' for none); ARGV[3..] the record's fields, as
-- field, value pairs. Returns 1 if written, 0 otherwise.
local holder
if redis.call('TYPE', KEYS[2])['ok'] == 'hash' then
  if redis.call('HEXISTS', KEYS[2], 'h:' .. ARGV[1]) == 1 then
    holder = redis.call('HGET', KEYS[2], 'owner')
  end
elseif redis.call('GET', KEYS[2]) == ARGV[1] then
  holder = ARGV[1]
end
if not holder then
  return 0
end
local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then
  return 0
end
redis.call('DEL', KEYS[3])
redis.call('HSET', KEYS[3], 'token', holder, unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[3], ttl)
if ARGV[2] ~= '' then
  redis.call('PUBLISH', ARGV[2], '1')
end
return 1
