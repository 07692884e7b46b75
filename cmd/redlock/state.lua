-- redlock inspect: read the keys of a lock on one master, atomically.
-- KEYS: the keys; ARGV[i]: the role of KEYS[i] (see shape.lua).
-- Returns {now, entry, ...}: now is the master's clock in ms (TIME), then
-- one entry per key, {type, pttl, why, content}. why is '' when the key is
-- absent or has its role's shape, else why it is not lock state (and its
-- content is not read). content is {value} for a string, HGETALL's list
-- for a hash, ZRANGE WITHSCORES's for a sorted set.
local t = redis.call('TIME')
local out = {tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)}
for i, key in ipairs(KEYS) do
  local typ = redis.call('TYPE', key)['ok']
  local entry = {typ, redis.call('PTTL', key), '', {}}
  if typ ~= 'none' then
    local why = shape(ARGV[i], key)
    if why then
      entry[3] = why
    elseif typ == 'string' then
      entry[4] = {redis.call('GET', key)}
    elseif typ == 'hash' then
      entry[4] = redis.call('HGETALL', key)
    else
      entry[4] = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
    end
  end
  out[i + 1] = entry
end
return out
