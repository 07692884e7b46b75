-- What a key that a lock writes looks like, so that redlock inspect and
-- unlock tell lock state from an application's data under the same name,
-- and never touch the latter. redlock puts this file in front of
-- state.lua, force.lua and unlock.lua (one EVAL each).
--
-- shape(role, key) returns nil when key has the shape that the lock kinds
-- of package redlock (and their holder records) write in that role, else
-- a phrase saying why not. Call it on an existing key only. The
-- roles (redlock/layout names the keys):
--   'key'      the lock key: a string holding a token (a plain, fenced,
--              fair or multi-key lock), or a reentrant lock's hash (the
--              field 'owner' and one field 'h:<hold id>' = '1' per hold)
--   'writer', 'waiting', 'permit'
--              a string holding a token (a writer's, a waiting writer's
--              id, a permit holder's)
--   'readers', 'queue', 'expiry'
--              a sorted set of tokens with integer scores (readers by
--              expiry, fair waiters by ticket and by expiry)
--   'ticket', 'fence'
--              a counter (a decimal integer); a fencing counter of an
--              older version may lack a TTL
--   'holder', 'permit-holder'
--              a holder record (redlock.WithMetadata; redlock run's and
--              an election's are such) of the lock, or of a semaphore
--              permit: a hash whose field 'token' is a token (or the
--              owner of the reentrant lock KEYS[1]: every script that
--              calls shape has the lock key first), with the caller's
--              fields, at most MAX_METADATA bytes of them
-- Every other key has a TTL. A token is what the library writes: a
-- crypto/rand.Text() string, exactly 26 characters of the base32
-- alphabet A-Z and 2-7 (lock tokens, hold ids, writer and waiter ids are
-- all made so); a cached UUID, a JWT, a URL or a session id is not one. A
-- collection of more than LIMIT elements is read no further: it is no
-- lock. The keys that are the library's memory, never a lock whatever
-- they hold, are named so: the restart guard's record and the durable
-- confirmations' probe (RESERVED, whatever the prefix: scripts.go puts
-- their names, from redlock/layout, in front of this file), and a
-- fencing counter (a counter under a name ending in ':fence').
local LIMIT = 10000
local TOKEN_LEN = 26

local function tokenlike(v)
  return type(v) == 'string' and #v == TOKEN_LEN and string.find(v, '^[A-Z2-7]+$') ~= nil
end

local function decimal(v)
  return type(v) == 'string' and #v >= 1 and #v <= 20 and string.find(v, '^%d+$') ~= nil
end

-- stringOf checks a string of at most maxlen bytes that ok accepts
-- (reading no longer one), else says it is no what.
local function stringOf(key, maxlen, ok, what)
  if redis.call('STRLEN', key) > maxlen or not ok(redis.call('GET', key)) then
    return 'a string that is not ' .. what
  end
end

local function reentrantHash(key)
  if redis.call('HLEN', key) > LIMIT then
    return 'a hash too big for a reentrant lock'
  end
  local kv = redis.call('HGETALL', key)
  local owner, holds = false, 0
  for i = 1, #kv, 2 do
    local f, v = kv[i], kv[i + 1]
    if f == 'owner' then
      owner = v ~= ''
    elseif string.sub(f, 1, 2) == 'h:' and tokenlike(string.sub(f, 3)) and v == '1' then
      holds = holds + 1
    else
      return 'a hash with fields other than a reentrant lock\'s (owner, h:<hold id>)'
    end
  end
  if not owner or holds == 0 then
    return 'a hash without a reentrant lock\'s fields (owner, h:<hold id>)'
  end
end

local function tokenZset(key)
  if redis.call('ZCARD', key) > LIMIT then
    return 'a sorted set too big for a lock'
  end
  local m = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  for i = 1, #m, 2 do
    if not tokenlike(m[i]) or not decimal(m[i + 1]) then
      return 'a sorted set that is not a lock\'s (tokens scored by integers)'
    end
  end
end

-- OWNER is the owner of the reentrant lock KEYS[1], the lock key, as the
-- script found it (before it deleted anything), or false.
local OWNER = redis.call('TYPE', KEYS[1])['ok'] == 'hash' and redis.call('HGET', KEYS[1], 'owner')

-- holderHash checks a holder record (redlock.WithMetadata): the field
-- 'token' holding a token (a reentrant lock's record: its owner, which
-- may be any string, when the lock key is that owner's reentrant hash),
-- and the caller's fields, at most MAX_METADATA bytes of names and values
-- together (scripts.go puts the library's bound, redlock.MaxMetadataLen,
-- in front of this file).
local function holderHash(key)
  local token = redis.call('HGET', key, 'token')
  if redis.call('HLEN', key) > MAX_METADATA + 1 or not (tokenlike(token) or token and token == OWNER) then
    return 'a hash that is not a holder record (no token field of the library\'s format)'
  end
  local size = 0
  local kv = redis.call('HGETALL', key)
  for i = 1, #kv, 2 do
    if kv[i] ~= 'token' then
      size = size + #kv[i] + #kv[i + 1]
    end
  end
  if size > MAX_METADATA then
    return 'a hash too big for a holder record (more than ' .. MAX_METADATA .. ' bytes of fields)'
  end
end

-- reserved says why key, by its name, is none of a lock's keys but the
-- library's own memory, or returns nil.
local function reserved(key)
  for suffix, what in pairs(RESERVED) do
    if #key >= #suffix and string.sub(key, -#suffix) == suffix then
      return what .. ', never a lock'
    end
  end
end

local function fenceName(key)
  return #key > 6 and string.sub(key, -6) == ':fence'
end

local WANT = {
  key = 'string', writer = 'string', waiting = 'string', permit = 'string',
  ticket = 'string', fence = 'string',
  readers = 'zset', queue = 'zset', expiry = 'zset', holder = 'hash',
  ['permit-holder'] = 'hash',
}

local function shape(role, key)
  local why = reserved(key)
  if why then
    return why
  end
  local t = redis.call('TYPE', key)['ok']
  local want = WANT[role]
  if role == 'key' and t == 'hash' then
    want = 'hash'
  end
  if t ~= want then
    return 'a ' .. t .. ', which no lock keeps here'
  end
  if role ~= 'fence' and redis.call('PTTL', key) < 0 then
    return 'a ' .. t .. ' without a TTL (every key a lock writes has one)'
  end
  if role == 'holder' or role == 'permit-holder' then
    return holderHash(key)
  elseif t == 'hash' then
    return reentrantHash(key)
  elseif t == 'zset' then
    return tokenZset(key)
  elseif role == 'ticket' or role == 'fence' then
    return stringOf(key, 20, decimal, 'a counter')
  elseif fenceName(key) and not stringOf(key, 20, decimal, 'a counter') then
    return 'a fencing counter, never a lock'
  end
  return stringOf(key, TOKEN_LEN, tokenlike, 'a lock token (26 characters of base32)')
end
