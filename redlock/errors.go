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
	// masters answered, and none refused. The lock may well be free; the
	// masters are down, cut off or too slow. Tell it apart from
	// contention to decide whether to run anyway, retry later or alert.
	ErrUnavailable = errors.New("redlock: too few masters answered")
)

// QuorumError describes an operation that did not reach its quorum (or
// reached it too late). Use errors.As to get it; errors.Is matches
// ErrNotAcquired (for Op "lock") or ErrLockLost (for "extend" and
// "unlock"), the context's error when the context ended first, and each
// failed master's error.
type QuorumError struct {
	Op  string // "lock", "extend" or "unlock"
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
// timeout), none refused, and fewer than a quorum granted. A call whose
// context ended before any master failed is not.
func (e *QuorumError) Unavailable() bool {
	return e.Refused == 0 && e.Granted < e.Quorum && e.Failed > 0
}

// Unwrap returns the operation's sentinel (with ErrUnavailable when
// Unavailable), Cause and NodeErrors.
func (e *QuorumError) Unwrap() []error {
	errs := []error{ErrLockLost}
	if e.Op == opLock {
		errs[0] = ErrNotAcquired
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
	// opRelease is the release of a failed attempt (or a writer's
	// withdrawal), seen only by Config.OnNodeError and Observer.NodeError.
	opRelease = "release"
)

// quorumError describes a failed round; res is nil when ctx had ended before
// anything was sent.
func (l *Locker) quorumError(op, key string, res *quorum.Result, cause error) *QuorumError {
	if res == nil {
		return &QuorumError{Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum, Pending: len(l.nodes), Cause: cause}
	}
	return &QuorumError{
		Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum,
		Granted: res.Yes, Refused: res.No, Failed: res.Failed, Pending: res.Pending(),
		Cause:      cause,
		NodeErrors: res.Err(func(i int) string { return l.nodes[i].Addr() }),
	}
}
