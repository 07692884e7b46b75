-- The restart guard's record of this master (see redlock/guard.go): the
-- run id that a client registered for it, the persistence that run had,
-- and the longest TTL in ms that any client recorded on it.
-- KEYS[1] the record (a hash that never expires).
-- Returns {run, fsync, ttl}; {'', '', 0} when there is no record.
local r = redis.call('HMGET', KEYS[1], 'run', 'fsync', 'ttl')
return {r[1] or '', r[2] or '', tonumber(r[3] or '0')}
