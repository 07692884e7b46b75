-- Registers this master's run id in its restart-guard record, and raises
-- the longest TTL recorded (see redlock/guard.go), unless another client
-- registered another run id since this one read the record.
-- KEYS[1] the record. ARGV[1] the run id; ARGV[2] its persistence
-- ('always' when it persists every write, else 'other'); ARGV[3] a TTL in
-- ms to record at least; ARGV[4] the run id the client read ('' for none).
-- Returns {run, ttl, written}: the record after the call, and 1 when it
-- was written, 0 when the record names another run id than ARGV[1] and
-- ARGV[4].
local cur = redis.call('HGET', KEYS[1], 'run') or ''
if cur ~= ARGV[1] and cur ~= ARGV[4] then
  return {cur, tonumber(redis.call('HGET', KEYS[1], 'ttl') or '0'), 0}
end
local ttl = math.max(tonumber(redis.call('HGET', KEYS[1], 'ttl') or '0'), tonumber(ARGV[3]))
redis.call('HSET', KEYS[1], 'run', ARGV[1], 'fsync', ARGV[2], 'ttl', ttl)
return {ARGV[1], ttl, 1}
