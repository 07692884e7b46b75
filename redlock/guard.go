package redlock

// The restart guard. A master that restarts without having persisted its
// writes (no AOF, or appendfsync everysec and the last second lost) comes
// back without the locks it held, and would grant them again: a second
// holder, unless the lock's other masters refuse. Redlock's answer is
// operational (keep a restarted master down for the longest TTL); the
// guard does it from the client: a master's grants do not count (they are
// failed votes, ErrRestarted) until it has been up for the guard's length,
// at least the longest TTL of any lock that it may have forgotten. Every
// lock granted before the restart has expired by then, on every master,
// so the grants it makes afterwards cannot overlap one of them.
//
// What the guard needs is the master's process identity: the Node reads
// INFO server (run_id, uptime_in_seconds) on every new connection
// (MasterIdentity, which *pool.Node has), so it costs nothing per call. A
// restart always closes the connections, so a grant that arrives on a
// connection made after the restart is judged by that connection's
// reading.
//
// Which restarts it guards against (Config.RestartGuard):
//
//   - 0, the default: every restart that the Node saw happen (a run id
//     other than the first one it saw), for the longest TTL that this
//     Locker has acquired, extended or resumed a lock with (the other
//     processes' TTLs are not its to know: where they are longer, use
//     > 0). A master first met after its restart is trusted:
//     a freshly started master is usable at once, as tests and a quick
//     start need. This covers a long-running service whose master
//     restarts; it does not cover a process that starts after a master
//     restarted while another process held a lock there.
//   - > 0: every master that has been up for less than RestartGuard, met
//     before or not. Set it to the longest TTL any client uses on these
//     masters (more, to cover clock differences between the masters),
//     for masters that do not persist every write.
//   - < 0: off, for masters that operations keep down for the TTL after a
//     restart.
//
// A master that persists every write (AOF with appendfsync always, as the
// Node reads it on each new connection) needs no guard and gets none: it
// comes back with its locks.
//
// A Node without the MasterIdentity ability is not guarded: *pool.Node and
// the go-redis adapter have it; the rueidis and valkey-go adapters do not
// (yet).

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// MasterIdentity is an optional Node ability, for the restart guard: the
// master's process as the Node's newest connection read it (INFO server):
// its run id, when it started on this client's clock, whether the run id
// differs from the first one the Node saw, and whether it persists every
// write (AOF with appendfsync always: it needs no guard). ok is false when
// the Node does not know (no connection yet, INFO refused). *pool.Node has it. A
// wrapper Node must forward it.
type MasterIdentity interface {
	MasterIdentity() (runID string, started time.Time, restarted, durable, ok bool)
}

// ErrRestarted is the error of a master's grant that the restart guard
// did not count: the master restarted too recently (see
// Config.RestartGuard).
var ErrRestarted = errors.New("redlock: master restarted recently: its grants do not count yet")

// guardState is a Locker's restart guard.
type guardState struct {
	strict  time.Duration // > 0: guard every master up for less; 0: seen restarts; < 0: off
	durable bool          // Durability.Local: every counted grant survives a restart
	maxTTL  atomic.Int64  // the longest TTL used, for the default guard
}

// used records a TTL the Locker acquires, extends or resumes with: its
// two call builders, acquireCall and extendCall, call it.
func (g *guardState) used(ttl time.Duration) {
	for {
		cur := g.maxTTL.Load()
		if int64(ttl) <= cur || g.maxTTL.CompareAndSwap(cur, int64(ttl)) {
			return
		}
	}
}

// judge turns a grant by master i, whose identity s reports, into a failed
// vote while the guard holds the master back.
func (g *guardState) judge(s *sender, v quorum.Vote) quorum.Vote {
	if !v.Yes || s.ident == nil || g.strict < 0 || g.durable {
		return v
	}
	_, started, restarted, durable, ok := s.ident.MasterIdentity()
	if !ok || durable {
		return v
	}
	length := g.strict
	if length == 0 {
		if !restarted {
			return v
		}
		length = time.Duration(g.maxTTL.Load())
	}
	if until := started.Add(length); time.Now().Before(until) {
		return quorum.Vote{Err: fmt.Errorf("%w: up since %v, grants count from %v", ErrRestarted, started.Round(time.Second), until.Round(time.Second))}
	}
	return v
}
