-- redlock unlock --force: delete the keys of a lock whoever holds them, and
-- tell waiters; but only keys with the shape a lock writes (shape.lua):
-- anything else under those names (an application's data) is left alone
-- and named. The fencing counter and the fair queue are never among KEYS.
-- KEYS: the keys; ARGV[1] the release channel; ARGV[i+1] the role of
-- KEYS[i]. A holder record (role 'holder') goes with the lock, unlisted.
-- Returns {deleted, refused}: the names deleted, and name, why pairs of
-- the keys left alone.
local deleted, refused = {}, {}
for i, key in ipairs(KEYS) do
  local role = ARGV[i + 1]
  if redis.call('EXISTS', key) == 1 then
    local why = shape(role, key)
    if role == 'holder' then
      if not why then
        redis.call('DEL', key)
      end
    elseif why then
      table.insert(refused, key)
      table.insert(refused, why)
    else
      redis.call('DEL', key)
      table.insert(deleted, key)
    end
  end
end
if #deleted > 0 then
  redis.call('PUBLISH', ARGV[1], '1')
end
return {deleted, refused}
