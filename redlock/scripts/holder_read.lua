-- Locker.Holder: who holds a lock on this master, changing nothing.
-- KEYS[1] the lock key (a plain, fenced or fair lock's string, a
-- multi-key lock's first key, or a reentrant lock's hash); KEYS[2] its
-- holder record (layout.Holder), also a read-write lock's writer's;
-- KEYS[3] the writer key of a read-write lock of that name. The holder is
-- the string's value, the reentrant lock's owner, or else the writer's
-- token.
-- Returns {} when neither holds a lock; else {token, remaining TTL in ms,
-- the record as HGETALL lists it, or {} when it is absent or names
-- another token}.
local key = KEYS[1]
local kind = redis.call('TYPE', key)['ok']
local token
if kind == 'string' then
  token = redis.call('GET', key)
elseif kind == 'hash' then
  token = redis.call('HGET', key, 'owner')
elseif kind == 'none' and redis.call('TYPE', KEYS[3])['ok'] == 'string' then
  key = KEYS[3]
  token = redis.call('GET', key)
end
if not token then
  return {}
end
local ttl = redis.call('PTTL', key)
local rec = {}
if redis.call('HGET', KEYS[2], 'token') == token then
  rec = redis.call('HGETALL', KEYS[2])
end
return {token, ttl, rec}
