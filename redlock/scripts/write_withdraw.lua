-- Write lock, a waiting writer gives up: remove its waiting mark, if it is
-- still its own, and tell the readers it held back. A late acquire of one
-- of its attempts is refused by that attempt's tombstone (write_release.lua).
-- KEYS[1] tombstone (unused); KEYS[4] waiting writer (the others unused).
-- ARGV[1] unused; ARGV[2] release channel; ARGV[3] unused; ARGV[4] writer
-- id. Returns 1 if the mark was ours.
if redis.call('GET', KEYS[4]) == ARGV[4] then
  redis.call('DEL', KEYS[4])
  redis.call('PUBLISH', ARGV[2], '1')
  return 1
end
return 0
