package redlock

// Durable grants. A master that restarts comes back with what its AOF held
// on disk: with appendfsync everysec, the last second of writes may be
// lost, and a grant among them (a second holder, once that master counts
// towards someone else's quorum). A master that fails over to a replica
// hands over what the replica had received: asynchronous replication may
// not have brought the grant there yet. With Config.Durability a master's
// grant, and its Extend, counts only once it is durable: on the master's
// AOF on disk (Local: WAITAOF, Redis 7.2 or Valkey with appendonly yes),
// and acknowledged by Replicas replicas (WAITAOF's second count, or WAIT).
// The Node confirms it on a connection of its own, with one probe write
// and one WAITAOF for every grant that ran before the probe (group commit:
// see nodeutil.Committer), so a durable grant costs one fsync shared with
// the grants around it, and never blocks the other callers of the shared
// pipelined connection. A grant that cannot be confirmed in time (or a
// master that cannot confirm at all: AOF off, an older server, a replica
// missing) is a failed vote with an error that says so (ErrNotDurable),
// never a silent plain grant. A master whose grants are durable needs no
// restart guard: with Local, the guard is off.
//
// What durability does not cover: a replica that restarts empty and is
// then promoted; a failover that promotes a replica that did not
// acknowledge (with Replicas below the number of replicas, Sentinel may
// pick one that did not); a master whose disk lies about fsync.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// Durability makes a master's grant (and Extend) count only once it is
// durable. The zero value asks for nothing: a grant counts when the script
// said yes.
type Durability struct {
	// Local: the grant is in the master's AOF on disk (WAITAOF; the
	// master needs appendonly yes, and Redis 7.2+ or Valkey). With
	// appendfsync always this costs nothing; with everysec, up to one
	// fsync interval.
	Local bool
	// Replicas: the grant was acknowledged by at least this many of the
	// master's replicas (WAIT, or WAITAOF with Local), so that a failover
	// to one of them keeps it.
	Replicas int
	// Timeout bounds the wait for a confirmation; 0 means 2s. It adds to
	// the node timeout of every acquire and Extend, and counts in the
	// lock's validity like any other time the round takes.
	Timeout time.Duration
}

// DefaultDurableTimeout is Durability.Timeout's default.
const DefaultDurableTimeout = 2 * time.Second

// on reports whether d asks for anything.
func (d Durability) on() bool { return d.Local || d.Replicas > 0 }

// DurableNode is an optional Node ability, which Config.Durability needs:
// Durable asks the master to confirm that every write that ran on it before
// the call is durable (with local, in its AOF on disk; and acknowledged by
// replicas replicas), returns at once, and runs done once with the counts
// acknowledged (as WAITAOF answers: 0 or 1 local, and replicas), or an
// error; ctx's deadline bounds the wait. done must not block. *pool.Node
// implements it. A wrapper Node must forward it.
type DurableNode interface {
	Durable(ctx context.Context, local bool, replicas int, done func(local, replicas int, err error))
}

// ErrNotDurable is the error of a master's grant or Extend that could not
// be confirmed durable as Config.Durability asks: it did not count.
var ErrNotDurable = errors.New("redlock: grant not confirmed durable")

// confirm runs deliver with master i's vote once it is durable: at once
// for anything but a yes, or when durability is off; else once the Node
// confirmed it (maybe on another goroutine), as a failed vote if it could
// not.
func (l *Locker) confirm(c *call, i int, v quorum.Vote, deliver func(quorum.Vote)) {
	if !v.Yes || !c.durable {
		deliver(v)
		return
	}
	d := l.durability
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), d.Timeout)
	l.senders[i].durable.Durable(ctx, d.Local, d.Replicas, func(local, replicas int, err error) {
		cancel()
		switch {
		case err != nil:
			v = quorum.Vote{Err: fmt.Errorf("%w: %w", ErrNotDurable, err)}
		case d.Local && local < 1, replicas < d.Replicas:
			v = quorum.Vote{Err: fmt.Errorf("%w: %d local and %d replicas acknowledged, want %d and %d", ErrNotDurable, local, replicas, b2i(d.Local), d.Replicas)}
		}
		deliver(v)
	})
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
