-- redlock unlock --token: remove one holder's hold of a lock, whatever its
-- kind, and tell waiters. The compare-and-delete of redlock/scripts/
-- release.lua (a plain, fenced, fair or multi-key lock's key, a writer, a
-- permit), widened to the other holders a token names: a reentrant owner's
-- holds (all of them: the hash, whose field 'owner' names the owner, goes)
-- and a reader. What holds the token but has no lock's shape (shape.lua:
-- no TTL, say) is left alone and named. A holder record (role 'holder',
-- or a permit's 'permit-holder')
-- with the token goes too, unlisted (a hash there with the token that is
-- no holder record is left alone and named).
-- KEYS: the keys; ARGV[1] the token (a reentrant lock's owner); ARGV[2]
-- the release channel; ARGV[i+2] the role of KEYS[i].
-- Returns {removed, refused}: the kinds of hold removed ('lock',
-- 'reentrant', 'writer', 'reader', 'permit'), and name, why pairs of the
-- keys left alone.
local KIND = {key = 'lock', writer = 'writer', permit = 'permit'}
local token = ARGV[1]
local removed, refused = {}, {}
local function take(key, why, kind, del)
  if why then
    table.insert(refused, key)
    table.insert(refused, why)
  else
    del()
    table.insert(removed, kind)
  end
end
for i, key in ipairs(KEYS) do
  local role = ARGV[i + 2]
  local t = redis.call('TYPE', key)['ok']
  local del = function() redis.call('DEL', key) end
  if role == 'holder' or role == 'permit-holder' then
    if t == 'hash' and redis.call('HGET', key, 'token') == token then
      local why = shape(role, key)
      if why then
        table.insert(refused, key)
        table.insert(refused, why)
      else
        del()
      end
    end
  elseif role == 'readers' then
    if t == 'zset' and redis.call('ZSCORE', key, token) then
      take(key, shape(role, key), 'reader', function() redis.call('ZREM', key, token) end)
    end
  elseif t == 'hash' and role == 'key' then
    if redis.call('HGET', key, 'owner') == token then
      take(key, shape(role, key), 'reentrant', del)
    end
  elseif t == 'string' and KIND[role] then
    if redis.call('STRLEN', key) == #token and redis.call('GET', key) == token then
      take(key, shape(role, key), KIND[role], del)
    end
  end
end
if #removed > 0 then
  redis.call('PUBLISH', ARGV[2], '1')
end
return {removed, refused}
