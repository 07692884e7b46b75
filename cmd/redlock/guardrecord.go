package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// The restart guard's record (redlock/guard.go): every master keeps, under
// layout.Registry(prefix), a hash that never expires: the run id a client
// registered for the master (its process when it was judged to have lost
// no grant still valid), whether that run persisted every write, and the
// longest TTL any client recorded on it. A client counts a master's grants
// only once the record names its running process and covers the grant's
// TTL; a master whose record names another run, or that has none while
// other masters have one, restarted (and may have lost its locks): clients
// hold it back until it has been up for the longest TTL recorded. inspect
// shows the record beside the lock's state; doctor judges it.

// guardRecord is a master's restart-guard record as inspect and doctor
// show it.
type guardRecord struct {
	Run string `json:"run"` // the run id registered
	// Fsync is the persistence recorded for Run: "always" (AOF with
	// appendfsync always: it keeps every write across a restart) or
	// "other".
	Fsync string `json:"fsync"`
	TTLMs int64  `json:"ttl_ms"` // the longest TTL recorded, in ms
	// Registered: Run is the master's running process, as this command's
	// connection read it (false also when that is unknown).
	Registered bool `json:"registered"`
}

// readGuard reads master n's restart-guard record for the key prefix
// prefix; nil when there is none.
func readGuard(ctx context.Context, n *pool.Node, prefix string) (*guardRecord, error) {
	reply, err := n.Do(ctx, "HGETALL", layout.Registry(prefix))
	if err != nil {
		return nil, fmt.Errorf("reading the restart guard's record: %w", err)
	}
	kv, _ := reply.([]any)
	if len(kv) == 0 {
		return nil, nil
	}
	rec := &guardRecord{}
	for i := 0; i+1 < len(kv); i += 2 {
		v := string(asBytes(kv[i+1]))
		switch string(asBytes(kv[i])) {
		case layout.RegistryRun:
			rec.Run = v
		case layout.RegistryFsync:
			rec.Fsync = v
		case layout.RegistryTTL:
			rec.TTLMs, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	run := runID(n)
	rec.Registered = run != "" && run == rec.Run
	return rec, nil
}

// runID is the run id of master n's running process as its connection
// read it (INFO server), "" when unknown (no connection yet, or INFO
// refused).
func runID(n *pool.Node) string {
	id, err := n.Identity()
	if err != nil {
		return ""
	}
	return id.RunID
}

// describeGuard says in words what the record rec (nil: none) of a master
// whose running process is run ("" when unknown) says.
func describeGuard(rec *guardRecord, run string) string {
	if rec == nil {
		return "none (no client of this library registered the master with this prefix, or it restarted empty and lost it)"
	}
	ttl := ttlString(rec.TTLMs)
	switch {
	case rec.Registered:
		return fmt.Sprintf("run %s (the running process), fsync %s, longest TTL %s", rec.Run, rec.Fsync, ttl)
	case run == "":
		return fmt.Sprintf("run %s (the running process is unknown), fsync %s, longest TTL %s", rec.Run, rec.Fsync, ttl)
	}
	return fmt.Sprintf("run %s, not the running process %s (restarted since it was registered), fsync %s, longest TTL %s", rec.Run, run, rec.Fsync, ttl)
}
