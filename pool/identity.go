package pool

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The restart guard (redlock.MasterIdentity) needs to know when the master
// a Node talks to is a new process: one that restarted and may have lost
// the locks it held. Every new connection (pipelined, pooled or pub/sub)
// reads INFO server and persistence, and CONFIG GET appendfsync, once, as
// part of its set-up (one round trip, pipelined): the master's run_id,
// which a restart changes; its uptime, from which its start on this
// client's monotonic clock follows; and whether it persists every write
// (AOF on, appendfsync always), which makes the guard needless. That costs
// nothing per call. A master that refuses INFO (renamed or forbidden by an
// ACL) leaves the identity unknown, and the guard then cannot apply; one
// that refuses CONFIG counts as not durable.

// identity is what a Node knows of its master's process.
type identity struct {
	cur atomic.Pointer[masterInfo] // read on the newest connection; nil before

	mu    sync.Mutex
	first string // the first run id seen
}

// masterInfo is one reading.
type masterInfo struct {
	runID     string
	started   time.Time // now - uptime_in_seconds + 1s, when read: the latest start
	restarted bool      // runID is not the first run id this Node saw
	durable   bool      // AOF on with appendfsync always
}

// note records a reading made on a new connection.
func (id *identity) note(runID string, uptime time.Duration, durable bool) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.first == "" {
		id.first = runID
	}
	// uptime_in_seconds counts whole seconds of the wall clock
	// (floor(now) - floor(start)): the process started after now - uptime
	// - 1s and before now - uptime + 1s. The latest is the safe one for the
	// guard, which must not end before the master was up for its length.
	started := time.Now().Add(time.Second - uptime)
	id.cur.Store(&masterInfo{runID: runID, started: started, restarted: runID != id.first, durable: durable})
}

// get returns the newest reading.
func (id *identity) get() (runID string, started time.Time, restarted, durable, ok bool) {
	m := id.cur.Load()
	if m == nil {
		return "", time.Time{}, false, false, false
	}
	return m.runID, m.started, m.restarted, m.durable, true
}

// identify reads the master's identity on a new connection, bounded by ctx,
// notes it in id, and returns the run id it read ("" when unknown). Error
// replies (INFO or CONFIG refused) are no error: the identity stays
// unknown, or not durable; a transport error fails the connection's
// set-up.
func identify(ctx context.Context, c redis.Conn, id *identity) (string, error) {
	if id == nil {
		return "", nil
	}
	cmds := [][]any{{"INFO", "server"}, {"INFO", "persistence"}, {"CONFIG", "GET", "appendfsync"}}
	for _, cmd := range cmds {
		if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
			return "", err
		}
	}
	if err := c.Flush(); err != nil {
		return "", err
	}
	replies := make([]any, len(cmds))
	errs := make([]error, len(cmds))
	for i := range replies {
		replies[i], errs[i] = redis.ReceiveContext(c, ctx)
		if _, refused := errs[i].(redis.Error); errs[i] != nil && !refused {
			return "", errs[i] // a transport error: the connection is no good
		}
	}
	server, err := redis.String(replies[0], errs[0])
	if err != nil {
		return "", nil // INFO refused: the identity stays unknown
	}
	runID, uptime, ok := parseServerInfo(server)
	if !ok {
		return "", nil
	}
	persistence, _ := redis.String(replies[1], errs[1])
	fsync, _ := redis.StringMap(replies[2], errs[2])
	durable := infoField(persistence, "aof_enabled") == "1" && fsync["appendfsync"] == "always"
	id.note(runID, uptime, durable)
	return runID, nil
}

// parseServerInfo reads run_id and uptime_in_seconds from INFO server.
func parseServerInfo(info string) (runID string, uptime time.Duration, ok bool) {
	runID = infoField(info, "run_id")
	s, err := strconv.ParseInt(infoField(info, "uptime_in_seconds"), 10, 64)
	if err != nil || runID == "" {
		return "", 0, false
	}
	return runID, time.Duration(s) * time.Second, true
}

// infoField is the value of field in an INFO reply, "" when absent.
func infoField(info, field string) string {
	for line := range strings.Lines(info) {
		if k, v, found := strings.Cut(strings.TrimSpace(line), ":"); found && k == field {
			return v
		}
	}
	return ""
}

// MasterIdentity returns what the Node read of its master's process on its
// newest connection: its run id, when it started at the latest (on this
// client's clock; uptime counts whole seconds), whether the run id differs
// from the first one this Node saw (the master restarted since), and
// whether it persists every write (AOF with appendfsync always). ok is false before the first connection,
// and when the master refuses INFO. It is the redlock.MasterIdentity
// ability, which the restart guard uses.
func (n *Node) MasterIdentity() (runID string, started time.Time, restarted, durable, ok bool) {
	return n.ident.get()
}
