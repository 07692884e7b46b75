package recorded

import "strings"

// Mode is how a script runs for a lock with a holder record.
type Mode string

// The modes: see the package comment.
const (
	Acquire Mode = "record-acquire"
	Sync    Mode = "record-sync"
	Read    Mode = "record-read"
)

// Modes are every Mode.
var Modes = []Mode{Acquire, Sync, Read}

// Name names the script name in mode m, for the digests' table.
func Name(name string, m Mode) string { return name + "+" + string(m) }

// Wrap returns the script src of a lock kind run in mode m.
func Wrap(src string, m Mode) string {
	var b strings.Builder
	b.WriteString(head)
	if m == Acquire {
		b.WriteString(fields)
	}
	b.WriteString(keys)
	if m != Read {
		b.WriteString(sync)
	}
	b.WriteString("local reply = (function()\n")
	b.WriteString(src)
	b.WriteString("\nend)()\n")
	switch m {
	case Acquire:
		b.WriteString(grant)
	case Sync:
		b.WriteString("sync()\n")
	}
	b.WriteString("return reply\n")
	return b.String()
}

const head = `-- A lock kind's script run for a lock with a holder record: see
-- redlock/internal/recorded. KEYS[3] is the record; the script below sees
-- the other KEYS.
local RECORD = KEYS[3]
`

// fields takes the record's fields and their count off the end of ARGV.
const fields = `local NFIELDS = tonumber(ARGV[#ARGV])
local FIELDS = {unpack(ARGV, #ARGV - math.max(NFIELDS, 0), #ARGV - 1)}
local ARGV = {unpack(ARGV, 1, #ARGV - math.max(NFIELDS, 0) - 1)}
`

const keys = `local KEYS = {KEYS[1], KEYS[2], unpack(KEYS, 4)}
`

// sync defines holder (who holds the lock key k on this master: its
// value, or a reentrant lock's owner) and sync.
const sync = `local function holder(k)
  local kind = redis.call('TYPE', k)['ok']
  if kind == 'string' then
    return redis.call('GET', k)
  elseif kind == 'hash' then
    return redis.call('HGET', k, 'owner')
  end
  return false
end
local function sync()
  local token = redis.call('HGET', RECORD, 'token')
  if not token then
    return -- no record: nothing to follow the lock (a lock without one)
  end
  if holder(KEYS[2]) == token then
    local ttl = redis.call('PTTL', KEYS[2])
    if ttl > 0 then
      redis.call('PEXPIRE', RECORD, ttl)
    elseif redis.call('PTTL', RECORD) == -1 then
      redis.call('DEL', RECORD) -- just written, for a lock in its last ms
    end
  else
    redis.call('DEL', RECORD)
  end
end
`

const grant = `if reply and reply ~= 0 then
  if NFIELDS >= 0 then
    local h = holder(KEYS[2])
    if h then
      redis.call('DEL', RECORD)
      redis.call('HSET', RECORD, 'token', h, unpack(FIELDS))
    end
  end
  sync()
end
`
