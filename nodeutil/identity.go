package nodeutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The master's process identity, for the restart guard
// (redlock.MasterIdentity) and for durable confirmations: a Node reads it
// on every new connection (IdentityCommands, pipelined in the
// connection's set-up: nothing per call) and keeps the newest reading in
// an Identity. A restart changes the master's run id, so does a failover
// to a replica; the uptime gives when the process started, on the
// client's clock. A master that refuses INFO (renamed, or forbidden by an
// ACL) leaves the identity unknown; one that refuses CONFIG counts as not
// persisting every write.

// IdentityCommands are the commands whose replies Identity.Note reads:
// INFO server (run_id, uptime_in_seconds), INFO persistence (aof_enabled)
// and CONFIG GET appendfsync.
var IdentityCommands = [][]string{{"INFO", "server"}, {"INFO", "persistence"}, {"CONFIG", "GET", "appendfsync"}}

// ErrMasterChanged is the error of a durable confirmation made by another
// master process than the one its Node knew when the confirmation was
// asked for (a restart, or a failover, in between): it confirms nothing
// about the writes made before.
var ErrMasterChanged = errors.New("nodeutil: the master changed before its writes were confirmed durable")

// checkMaster returns an error that matches ErrMasterChanged when a
// durable confirmation ran on the master process ranOn while its caller
// asked it of want (the Node's reading when it asked: Identity.RunID); an
// unknown one ("") passes.
func checkMaster(want, ranOn string) error {
	if want == "" || ranOn == "" || want == ranOn {
		return nil
	}
	return fmt.Errorf("%w (asked of run id %s, confirmed by %s)", ErrMasterChanged, want, ranOn)
}

// Identity is what a Node knows of its master's process. The zero value
// knows nothing; it is safe for concurrent use.
type Identity struct {
	cur atomic.Pointer[reading] // the newest; nil before the first

	mu    sync.Mutex
	first string // the first run id noted
}

// reading is one Note.
type reading struct {
	runID     string
	started   time.Time // the latest the process can have started: now - uptime + 1s
	restarted bool      // runID is not the first run id noted
	durable   bool      // AOF on with appendfsync always
}

// Note records a reading made on a new connection, from the replies to
// IdentityCommands: server and persistence are the two INFO texts, and
// appendfsync the value CONFIG GET gave ("" for a reply that was an
// error). It records nothing, and reports false, when server names no
// run id or uptime.
func (id *Identity) Note(server, persistence, appendfsync string) bool {
	runID := InfoField(server, "run_id")
	uptime, err := strconv.ParseInt(InfoField(server, "uptime_in_seconds"), 10, 64)
	if runID == "" || err != nil {
		return false
	}
	durable := InfoField(persistence, "aof_enabled") == "1" && appendfsync == "always"
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.first == "" {
		id.first = runID
	}
	// uptime_in_seconds counts whole seconds of the wall clock
	// (floor(now) - floor(start)): the process started after now - uptime
	// - 1s and before now - uptime + 1s. The latest is the safe one for the
	// restart guard, which must not end before the master was up for its
	// length.
	started := time.Now().Add(time.Second - time.Duration(uptime)*time.Second)
	id.cur.Store(&reading{runID: runID, started: started, restarted: runID != id.first, durable: durable})
	return true
}

// Get returns the newest reading, as redlock.MasterIdentity does: the run
// id, the latest the process can have started (on this client's clock;
// uptime counts whole seconds), whether the run id differs from the first
// one noted, and whether the master persists every write (AOF with
// appendfsync always). ok is false before the first reading.
func (id *Identity) Get() (runID string, started time.Time, restarted, durable, ok bool) {
	r := id.cur.Load()
	if r == nil {
		return "", time.Time{}, false, false, false
	}
	return r.runID, r.started, r.restarted, r.durable, true
}

// RunID returns the newest reading's run id, "" before the first.
func (id *Identity) RunID() string {
	if r := id.cur.Load(); r != nil {
		return r.runID
	}
	return ""
}

// InfoField is the value of field in an INFO reply, "" when absent.
func InfoField(info, field string) string {
	for line := range strings.Lines(info) {
		if k, v, found := strings.Cut(strings.TrimSpace(line), ":"); found && k == field {
			return v
		}
	}
	return ""
}
