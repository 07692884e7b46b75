package redlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/quorum"
)

var (
	// ErrNotAcquired is matched (errors.Is) by every failed acquisition:
	// the lock is held by someone else, or too few masters answered, or the
	// quorum came too late, or the context ended first.
	ErrNotAcquired = errors.New("redlock: not acquired")
	// ErrLockLost is matched by a failed Extend or Unlock: no quorum holds
	// our token any more (it expired, or someone else holds the lock), too
	// few masters answered, or the lock's validity had already passed.
	ErrLockLost = errors.New("redlock: lock lost")
	// ErrUnavailable is matched, beside ErrNotAcquired or ErrLockLost, by
	// a *QuorumError whose quorum failed for want of answers: too few
	// masters answered in time (before the node timeout, or before the
	// caller's context ended), and none refused. The lock may well be
	// free; the masters are down, cut off or too slow. Tell it apart from
	// contention to decide whether to run anyway, retry later or alert. A
	// master that failed for a misconfiguration (its error matches
	// ErrInvalid) makes the error match ErrInvalid instead: code that runs
	// anyway when Redis is down must not run because of a typo.
	ErrUnavailable = errors.New("redlock: too few masters answered")
	// ErrNotHeld is matched by Locker.Holder (and Election.Leader) when a
	// quorum of the masters answered and no token holds a quorum of them.
	ErrNotHeld = errors.New("redlock: not held")
)

// QuorumError describes an operation that did not reach its quorum (or
// reached it too late). Use errors.As to get it; errors.Is matches
// ErrNotAcquired (for Op "lock") or ErrLockLost (for "extend", "unlock"
// and "check"), the context's error when the context ended first, and each
// failed master's error.
type QuorumError struct {
	Op  string // "lock", "extend", "unlock" or "check"
	Key string
	// Nodes is the number of masters and Quorum the number needed.
	Nodes, Quorum int
	// Granted, Refused and Failed count the masters that said yes, said
	// no (the key held another token, or was gone), or failed (an error
	// reply, a network error, no answer within the node timeout). Pending
	// masters had not answered when the outcome was decided.
	Granted, Refused, Failed, Pending int
	// Late is set when a quorum granted, but only after the validity was
	// used up.
	Late bool
	// Cause is the context's error when the context ended first, or, for
	// a fenced lock (Op "lock"), the error of writing the fencing token
	// back to the granting quorum when that failed.
	Cause error
	// NodeErrors holds each failed master's error (a *multierror.Error of
	// *quorum.NodeError, each naming the master's address), or nil.
	NodeErrors error

	sent bool // the round was sent: its pending masters had their chance
}

func (e *QuorumError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "redlock: %s %q: %d of %d granted, %d refused, %d failed", e.Op, e.Key, e.Granted, e.Nodes, e.Refused, e.Failed)
	if e.Pending > 0 {
		fmt.Fprintf(&b, ", %d pending", e.Pending)
	}
	fmt.Fprintf(&b, " (quorum %d)", e.Quorum)
	if e.Late {
		b.WriteString(": quorum reached after the validity was used up")
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	if e.NodeErrors != nil {
		fmt.Fprintf(&b, ": %v", e.NodeErrors)
	}
	return b.String()
}

// Unavailable reports whether the quorum failed for want of answers, not
// for refusals: some master failed (an error, no answer within the node
// timeout) or had not answered when the caller's context ended, none
// refused, fewer than a quorum granted, and no master failed for a
// misconfiguration (Misconfigured). A call whose context ended before it
// sent anything is not.
func (e *QuorumError) Unavailable() bool {
	return e.Refused == 0 && e.Granted < e.Quorum && (e.Failed > 0 || e.sent && e.Pending > 0) && !e.Misconfigured()
}

// Misconfigured reports whether some master failed for a
// misconfiguration, which no retry mends (its error matches ErrInvalid):
// a master whose identity the restart guard cannot read, one that cannot
// confirm what Config.Durability asks.
func (e *QuorumError) Misconfigured() bool {
	return e.NodeErrors != nil && errors.Is(e.NodeErrors, ErrInvalid)
}

// Unwrap returns the operation's sentinel (with ErrUnavailable when
// Unavailable), Cause and NodeErrors (which match ErrInvalid when
// Misconfigured).
func (e *QuorumError) Unwrap() []error {
	var errs []error
	switch e.Op {
	case opLock:
		errs = append(errs, ErrNotAcquired)
	case opHolder: // a read: nothing was lost
	default:
		errs = append(errs, ErrLockLost)
	}
	if e.Unavailable() {
		errs = append(errs, ErrUnavailable)
	}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	if e.NodeErrors != nil {
		errs = append(errs, e.NodeErrors)
	}
	return errs
}

const (
	opLock   = "lock"
	opExtend = "extend"
	opUnlock = "unlock"
	opCheck  = "check" // Lock.Check
	// opMetadata is Lock.SetMetadata; opHolder Locker.Holder.
	opMetadata = "metadata"
	opHolder   = "holder"
	// opRelease is the release of a failed attempt (or a writer's
	// withdrawal), seen only by Config.OnNodeError and Observer.NodeError.
	opRelease = "release"
	// opGuard is a read or write of the restart guard's records
	// (guard.go), seen only by Config.OnNodeError and Observer.NodeError.
	opGuard = "guard"
)

// quorumError describes a failed round; res is nil when ctx had ended before
// anything was sent.
func (l *Locker) quorumError(op, key string, res *quorum.Result, cause error) *QuorumError {
	if res == nil {
		return &QuorumError{Op: op, Key: key, Nodes: len(l.masters), Quorum: l.quorum, Pending: len(l.masters), Cause: cause}
	}
	return &QuorumError{
		Op: op, Key: key, Nodes: len(l.masters), Quorum: l.quorum,
		Granted: res.Yes, Refused: res.No, Failed: res.Failed, Pending: res.Pending(),
		Cause:      cause,
		NodeErrors: res.Err(func(i int) string { return l.masters[i].addr() }),
		sent:       true,
	}
}
