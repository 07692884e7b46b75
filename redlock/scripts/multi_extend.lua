-- Multi-key extend: compare-and-PEXPIRE of every key, all or none. Only when
-- every key still holds our token are they all extended; a key that is gone
-- or holds another token means this master no longer holds the lock, and
-- nothing is extended. Never creates a key.
-- KEYS[1] tombstone (unused); KEYS[2..] the lock keys. ARGV[1] token;
-- ARGV[2] new TTL in milliseconds. Returns 1 if extended, 0 otherwise.
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) ~= ARGV[1] then
    return 0
  end
end
for i = 2, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return 1
