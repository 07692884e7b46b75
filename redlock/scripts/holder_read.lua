-- Locker.Holder: who holds a plain or fenced lock on this master, changing
-- nothing. KEYS[1] lock key; KEYS[2] its holder record (layout.Holder).
-- Returns {} when the key holds no lock of Lock (absent, or not a string);
-- else {token, remaining TTL in ms, the record as HGETALL lists it, or {}
-- when it is absent or names another token}.
if redis.call('TYPE', KEYS[1])['ok'] ~= 'string' then
  return {}
end
local token = redis.call('GET', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
local rec = {}
if redis.call('HGET', KEYS[2], 'token') == token then
  rec = redis.call('HGETALL', KEYS[2])
end
return {token, ttl, rec}
