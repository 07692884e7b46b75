package redlock

// Durable grants. A master that restarts comes back with what its AOF held
// on disk: with appendfsync everysec, the last second of writes may be
// lost, and a grant among them (a second holder, once that master counts
// towards someone else's quorum). A master that fails over to a replica
// hands over what the replica had received: asynchronous replication may
// not have brought the grant there yet. With Config.Durability a master's
// grant, and its Extend, counts only once it is confirmed durable: on the
// master's AOF on disk (Local: WAITAOF, Redis 7.2 or Valkey with
// appendonly yes), and acknowledged by Replicas replicas (WAITAOF's second
// count, or WAIT). The Node confirms it (Abilities.Confirm) on a
// connection of its own, with one probe write and one WAITAOF for every
// grant that ran before the probe (group commit: see nodeutil.Committer),
// so a confirmed grant costs one fsync shared with the grants around it,
// and never blocks the other callers of the shared pipelined connection.
// A grant that cannot be confirmed in time is a failed vote with an error
// that says so (ErrNotDurable), never a silent plain grant; a master that
// cannot confirm at all (AOF off, appendfsync no, a server without
// WAITAOF) is a misconfiguration: its grants fail with an error that
// matches ErrInvalid, never one that reads as a master being down.
//
// The words: Config.Durability is what the user asks for; the Node's
// Confirm confirms; a grant that passed is confirmed. A master that
// persists every write (Identity.PersistsEveryWrite: AOF with appendfsync
// always) is another thing: it keeps every grant across a restart without
// any confirmation, which is what the restart guard asks.
//
// What durability does not cover: a replica that restarts empty and is
// then promoted; a failover that promotes a replica that did not
// acknowledge (with Replicas below the number of replicas, Sentinel may
// pick one that did not); a master whose disk lies about fsync.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// Durability makes a master's grant (and Extend) count only once it is
// confirmed durable. The zero value asks for nothing: a grant counts when
// the script said yes.
type Durability struct {
	// Local: the grant is in the master's AOF on disk (WAITAOF; the
	// master needs appendonly yes, an appendfsync other than no, and
	// Redis 7.2+ or Valkey). With appendfsync always this costs nothing;
	// with everysec, up to one fsync interval.
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

// ErrNotDurable is the error of a master's grant or Extend that could not
// be confirmed durable as Config.Durability asks: it did not count.
var ErrNotDurable = errors.New("redlock: grant not confirmed durable")

// confirm delivers m's yes vote on the call of s once the Node confirmed
// it durable (maybe on another goroutine), or as a failed vote if it
// could not.
func (m *master) confirm(s *slot, v quorum.Vote) {
	d := m.l.durability
	if err := m.canConfirm(); err != nil {
		m.deliver(s, quorum.Vote{Err: err})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.c.ctx), d.Timeout)
	m.ab.Confirm(ctx, m.l.probe, d.Local, d.Replicas, func(local, replicas int, err error) {
		cancel()
		switch {
		case err != nil:
			v = quorum.Vote{Err: fmt.Errorf("%w: %w", ErrNotDurable, err)}
		case d.Local && local < 1, replicas < d.Replicas:
			v = quorum.Vote{Err: fmt.Errorf("%w: %d local and %d replicas acknowledged, want %d and %d", ErrNotDurable, local, replicas, b2i(d.Local), d.Replicas)}
		}
		m.deliver(s, v)
	})
}

// canConfirm returns nil when the master can confirm what Config.Durability
// asks, as its identity says, and otherwise an error matching ErrInvalid
// and ErrNotDurable that names what is missing: a misconfiguration, which
// no retry mends. A master whose identity is unknown is let through: its
// Node's confirmation fails if it cannot.
func (m *master) canConfirm() error {
	if !m.l.durability.Local || m.ab.Identity == nil {
		return nil
	}
	id, err := m.ab.Identity()
	if err != nil {
		return nil
	}
	var missing string
	switch {
	case !id.AppendOnly:
		missing = "it runs without AOF (appendonly no), so WAITAOF cannot confirm a local write"
	case id.AppendFsync == "no":
		missing = "it runs appendfsync no, under which the AOF is never fsynced: a confirmation would confirm nothing"
	case id.Version != "" && !atLeast(id.Version, 7, 2):
		missing = "its version " + id.Version + " has no WAITAOF (Redis 7.2+ or Valkey)"
	default:
		return nil
	}
	return fmt.Errorf("%w: %w: master %s cannot give Durability{Local: true}: %s", ErrInvalid, ErrNotDurable, m.addr(), missing)
}

// atLeast reports whether version ("7.2.4") is at least major.minor.
func atLeast(version string, major, minor int) bool {
	var v [2]int
	fmt.Sscanf(version, "%d.%d", &v[0], &v[1])
	return cmp.Compare(v[0], major)*2+cmp.Compare(v[1], minor) >= 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
