package nodeutil

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// The master's process identity, for the restart guard
// (redlock.Abilities.Identity) and for durable confirmations: a Node reads
// it on every new connection (IdentityCommands, pipelined in the
// connection's set-up, before any command on it: nothing per call) and
// keeps the newest reading in an Identity. A restart changes the master's
// run id, so does a failover to a replica; the uptime gives when the
// process started, on the client's clock. A master that refuses INFO
// (renamed, or forbidden by an ACL) leaves the identity unknown, with the
// refusal as the reason; one that refuses CONFIG counts as not persisting
// every write.

// IdentityCommands are the commands whose replies Identity.Note reads:
// INFO server (run_id, uptime_in_seconds, redis_version), INFO persistence
// (aof_enabled) and CONFIG GET appendfsync.
var IdentityCommands = [][]string{{"INFO", "server"}, {"INFO", "persistence"}, {"CONFIG", "GET", "appendfsync"}}

// ErrMasterChanged is the error of a durable confirmation made by another
// master process than the one its Node knew when the confirmation was
// asked for (a restart, or a failover, in between): it confirms nothing
// about the writes made before.
var ErrMasterChanged = errors.New("nodeutil: the master changed before its writes were confirmed durable")

// errNotRead is why an Identity knows nothing before its first reading.
var errNotRead = errors.New("no connection has read it yet")

// checkMaster returns an error that matches ErrMasterChanged when a
// durable confirmation ran on the master process ranOn while its caller
// asked it of want (the Node's reading when it asked); an unknown one
// ("") passes.
func checkMaster(want, ranOn string) error {
	if want == "" || ranOn == "" || want == ranOn {
		return nil
	}
	return fmt.Errorf("%w (asked of run id %s, confirmed by %s)", ErrMasterChanged, want, ranOn)
}

// Identity is what a Node knows of its master's process: the newest
// reading, or why there is none. The zero value knows nothing; it is safe
// for concurrent use.
type Identity struct {
	cur atomic.Pointer[reading]
}

// reading is one Note, or one refusal.
type reading struct {
	id  redlock.Identity
	err error // why id is unknown; nil when known
}

// Note records a reading made on a new connection, from the replies to
// IdentityCommands: server and persistence are the two INFO texts, and
// appendfsync the value CONFIG GET gave ("" for a reply that was an
// error). It records nothing, and reports false, when server names no
// run id or uptime.
func (id *Identity) Note(server, persistence, appendfsync string) bool {
	r, ok := Parse(server, persistence, appendfsync, time.Now())
	if ok {
		id.cur.Store(&reading{id: r})
	}
	return ok
}

// Parse reads a master's identity from the replies to IdentityCommands,
// made at now (on the client's clock). ok is false when server names no
// run id or uptime.
func Parse(server, persistence, appendfsync string, now time.Time) (redlock.Identity, bool) {
	runID := InfoField(server, "run_id")
	uptime, err := strconv.ParseInt(InfoField(server, "uptime_in_seconds"), 10, 64)
	if runID == "" || err != nil {
		return redlock.Identity{}, false
	}
	// uptime_in_seconds counts whole seconds of the wall clock
	// (floor(now) - floor(start)): the process started after now - uptime
	// - 1s and before now - uptime + 1s. The latest is the safe one for the
	// restart guard, which must not end before the master was up for its
	// length.
	return redlock.Identity{
		RunID:       runID,
		Started:     now.Add(time.Second - time.Duration(uptime)*time.Second),
		AppendOnly:  InfoField(persistence, "aof_enabled") == "1",
		AppendFsync: appendfsync,
		Version:     InfoField(server, "redis_version"),
	}, true
}

// Refused records that the master refused to say who it is (err: its
// error reply to INFO), unless a reading is known: the Node's connections
// all belong to one client, and a refusal on one is a refusal on all.
func (id *Identity) Refused(err error) {
	if r := id.cur.Load(); r != nil && r.err == nil {
		return
	}
	id.cur.Store(&reading{err: fmt.Errorf("the master refused INFO: %w", err)})
}

// Get returns the newest reading, as redlock.Abilities.Identity does:
// before the first, or after a refusal, an error matching
// redlock.ErrNoIdentity that says why.
func (id *Identity) Get() (redlock.Identity, error) {
	r := id.cur.Load()
	switch {
	case r == nil:
		return redlock.Identity{}, fmt.Errorf("%w: %w", redlock.ErrNoIdentity, errNotRead)
	case r.err != nil:
		return redlock.Identity{}, fmt.Errorf("%w: %w", redlock.ErrNoIdentity, r.err)
	}
	return r.id, nil
}

// RunID returns the newest reading's run id, "" when unknown.
func (id *Identity) RunID() string {
	if r := id.cur.Load(); r != nil {
		return r.id.RunID
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
