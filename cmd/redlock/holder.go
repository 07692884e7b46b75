package main

import (
	"strconv"
)

// The holder record: redlock run keeps, beside the plain lock key it holds,
// a hash (layout.Holder) saying who holds the lock, so that inspect can tell
// an operator which host and process to look at, and since when. It is
// written with the lock's token, where (and only where) a master holds the
// lock with that token, expires with the lock key there, is rewritten after
// every renewal and is deleted with the lock (holder.lua, unlock.lua). A
// record is only information: inspect trusts it only when its token is the
// lock's.

// The fields of a holder record.
const (
	fieldToken      = "token"       // the lock's token
	fieldHost       = "host"        // os.Hostname of redlock run
	fieldPID        = "pid"         // redlock run's process id
	fieldCommand    = "command"     // COMMAND's name (its first word's base name)
	fieldCommandPID = "command_pid" // COMMAND's process id (and group), once started
	fieldStarted    = "started"     // when the lock was acquired, RFC 3339, UTC
	fieldNote       = "note"        // run --note
)

// holderRecord is a holder record as inspect shows it.
type holderRecord struct {
	Token      string `json:"token"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	Command    string `json:"command,omitempty"`
	CommandPID int    `json:"command_pid,omitempty"`
	Started    string `json:"started"`
	Note       string `json:"note,omitempty"`
	TTLMs      int64  `json:"ttl_ms"`
	// Matches: the lock key on this master holds the record's token. A
	// record that does not match is stale, and inspect ignores it.
	Matches bool `json:"matches"`
}

// readHolder reads a holder record from HGETALL's list.
func readHolder(kv []string, ttl int64) *holderRecord {
	r := &holderRecord{TTLMs: ttl}
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		switch kv[i] {
		case fieldToken:
			r.Token = v
		case fieldHost:
			r.Host = v
		case fieldPID:
			r.PID, _ = strconv.Atoi(v)
		case fieldCommand:
			r.Command = v
		case fieldCommandPID:
			r.CommandPID, _ = strconv.Atoi(v)
		case fieldStarted:
			r.Started = v
		case fieldNote:
			r.Note = v
		}
	}
	return r
}
