package main

import (
	"maps"
	"strconv"
)

// The holder record: a lock taken with redlock.WithMetadata (of any
// exclusive kind, or a semaphore's permit) keeps, beside its lock key, a
// hash (layout.Holder) saying who holds the lock: the field "token", the
// lock's token (a reentrant lock's owner), and the caller's fields. The library writes it with the lock where (and only
// where) a master grants it, extends it with every renewal, and deletes it
// with the lock; it never outlives the lock there. redlock run keeps one
// with the fields below, so that inspect can tell an operator which host
// and process to look at, and since when; an election (redlock elect)
// keeps "value" and "term"; any other library user keeps its own. A record
// is only information: inspect trusts it only when its token is the
// lock's, and prints whatever fields it has.

// The fields of redlock run's holder record, besides the token.
const (
	fieldToken      = "token"       // the lock's token (the library's own field)
	fieldHost       = "host"        // os.Hostname of redlock run
	fieldPID        = "pid"         // redlock run's process id
	fieldCommand    = "command"     // COMMAND's name (its first word's base name)
	fieldCommandPID = "command_pid" // COMMAND's process id (and group), once started
	fieldStarted    = "started"     // when the lock was acquired, RFC 3339, UTC
	fieldNote       = "note"        // run --note
)

// runFields are the fields that redlock run writes, which inspect's text
// puts in words ("held by pid ... on host ...").
var runFields = map[string]bool{fieldHost: true, fieldPID: true, fieldCommand: true,
	fieldCommandPID: true, fieldStarted: true, fieldNote: true}

// holderRecord is a holder record as inspect shows it: run's fields, each
// in a JSON field of its own (empty for a record that run did not write),
// and every field but the token, run's or not, in Metadata.
type holderRecord struct {
	Token      string `json:"token"`
	Host       string `json:"host"`
	PID        int    `json:"pid"`
	Command    string `json:"command,omitempty"`
	CommandPID int    `json:"command_pid,omitempty"`
	Started    string `json:"started"`
	Note       string `json:"note,omitempty"`
	// Metadata are the record's fields but the token, as the library's
	// user attached them (redlock.WithMetadata, Lock.SetMetadata): run's
	// above, an election's value and term, or any others.
	Metadata map[string]string `json:"metadata"`
	TTLMs    int64             `json:"ttl_ms"`
	// Matches: the lock key on this master holds the record's token. A
	// record that does not match is stale, and inspect ignores it.
	Matches bool `json:"matches"`
}

// readHolder reads a holder record from HGETALL's list.
func readHolder(kv []string, ttl int64) *holderRecord {
	r := &holderRecord{TTLMs: ttl, Metadata: map[string]string{}}
	for i := 0; i+1 < len(kv); i += 2 {
		f, v := kv[i], kv[i+1]
		if f == fieldToken {
			r.Token = v
			continue
		}
		r.Metadata[f] = v
		switch f {
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

// isRun reports whether the record is one that redlock run keeps (it names
// a host or a process).
func (r *holderRecord) isRun() bool { return r.Host != "" || r.PID > 0 }

// others are the record's fields that inspect's text does not put in
// words: all of them, but for a run's record its own.
func (r *holderRecord) others() map[string]string {
	if !r.isRun() {
		return r.Metadata
	}
	out := maps.Clone(r.Metadata)
	maps.DeleteFunc(out, func(f, _ string) bool { return runFields[f] })
	return out
}
