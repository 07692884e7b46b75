-- redlock unlock --force: delete the keys of a lock whoever holds them, and
-- tell waiters; but only keys with the shape a lock writes (shape.lua):
-- anything else under those names (an application's data) is left alone
-- and named: only what the library writes is deleted (a key holding a
-- token of its own format, a reentrant hash of its layout, ...), never an
-- application's UUID, JWT or URL that happens to have a TTL. The fencing
-- counter and the fair queue are never among KEYS, and shape.lua refuses
-- the restart guard's record and a fencing counter by name.
-- KEYS: the keys; ARGV[1] the release channel; ARGV[i+1] the role of
-- KEYS[i]. A holder record (role 'holder', or a permit's 'permit-holder')
-- goes with the lock, unlisted;
-- a hash there that is no holder record is left alone and named.
-- Returns {deleted, refused}: the names deleted, and name, why pairs of
-- the keys left alone.
local deleted, refused = {}, {}
for i, key in ipairs(KEYS) do
  local role = ARGV[i + 1]
  if redis.call('EXISTS', key) == 1 then
    local why = shape(role, key)
    if (role == 'holder' or role == 'permit-holder') and not why then
      redis.call('DEL', key)
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
