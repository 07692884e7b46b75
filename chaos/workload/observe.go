package workload

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// observer is the Observer of every Locker of a client. It passes every
// event on, and notes what the checks need:
//   - the failed calls to each master (NodeError), with their time and
//     operation. A master on which a release of the client failed may keep
//     what the call wrote until its TTL (nothing-left excuses it), and a
//     reentrant acquire that failed on a master may have landed there and
//     kept its hold, since a reentrant lock releases only where it was
//     granted (see redlock.Reentrant).
//
// The renewals and Extends of a watched hold are noted by a holdObserver
// of its own (watched).
type observer struct {
	redlock.Observer
	c      *Client
	master map[string]int // a master's index by the address the client reaches it at

	mu      sync.Mutex
	errs    []nodeError // the last errorMemory of failed calls, oldest first
	lockErr int64       // failed acquire calls so far
}

// nodeError is one failed call to a master.
type nodeError struct {
	at     time.Time
	op     string
	master int
}

// errorMemory is how long the observer remembers a failed call: longer
// than any check looks back (a cycle's calls and their settling).
const errorMemory = 30 * time.Second

func newObserver(c *Client, next redlock.Observer, nodes []redlock.Node) *observer {
	if next == nil {
		next = redlock.NopObserver{}
	}
	o := &observer{Observer: next, c: c, master: map[string]int{}}
	for j, n := range nodes {
		o.master[n.Addr()] = j
	}
	return o
}

// NodeError notes the failed call, and passes every event on.
func (o *observer) NodeError(e redlock.NodeErrorEvent) {
	if errors.Is(e.Err, errCrashed) {
		o.Observer.NodeError(e) // refused by a crashed node (crash.go): never sent
		return
	}
	now := time.Now()
	o.mu.Lock()
	if j, ok := o.master[e.Addr]; ok {
		drop := 0
		for drop < len(o.errs) && now.Sub(o.errs[drop].at) > errorMemory {
			drop++
		}
		o.errs = append(o.errs[drop:], nodeError{at: now, op: e.Op, master: j})
	}
	if e.Op == "lock" {
		o.lockErr++
	}
	o.mu.Unlock()
	o.Observer.NodeError(e)
}

// obstructed reports whether a failed renewal failed for want of answers
// (a master failed, did not answer in time, or the quorum came late),
// rather than because the masters refused it or the lock had expired.
func obstructed(err error) bool {
	var q *redlock.QuorumError
	if errors.As(err, &q) {
		return q.Failed > 0 || q.Pending > 0 || q.Late
	}
	return !errors.Is(err, redlock.ErrLockLost)
}

// failedSince reports whether a call of one of ops to master j failed at
// or after since.
func (o *observer) failedSince(j int, since time.Time, ops ...string) bool {
	return o.failedBetween(j, since, time.Time{}, ops...)
}

// failedBetween reports whether a call of one of ops to master j failed
// at or after from, and before to unless to is zero.
func (o *observer) failedBetween(j int, from, to time.Time, ops ...string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for i := len(o.errs) - 1; i >= 0 && !o.errs[i].at.Before(from); i-- {
		if o.errs[i].master != j || (!to.IsZero() && !o.errs[i].at.Before(to)) {
			continue
		}
		for _, op := range ops {
			if o.errs[i].op == op {
				return true
			}
		}
	}
	return false
}

// mark returns the count of failed acquire calls so far; uncertainSince
// reports whether any failed after mark m: a reentrant acquire of the
// client may then have landed where its answer was lost.
func (o *observer) mark() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.lockErr
}

func (o *observer) uncertainSince(m int64) bool { return o.mark() != m }

// holdObserver is the Observer of a Locker that one watched hold is taken
// with (watched): it notes the hold's every renewal and Extend, its Until
// afterwards (Extended) and, for a renewal that failed, whether it failed
// for want of answers (RenewFailed); and passes every event on to the
// client's observer. A Locker of its own makes the attribution exact: a
// renewal that returns after the hold ended is still that hold's.
type holdObserver struct {
	*observer
	id atomic.Int64 // the hold's id in the history, once granted
}

// bind makes the observer note its events as those of hold id.
func (o *holdObserver) bind(id int64) { o.id.Store(id) }

// Renew notes the event for the bound hold, and passes it on.
func (o *holdObserver) Renew(e redlock.RenewEvent) {
	if id := o.id.Load(); id != 0 {
		h := o.c.env.History
		now := time.Now()
		h.Extend(id, now, e.Until)
		if e.Err != nil && e.Auto {
			h.RenewFail(id, now, obstructed(e.Err), e.Err.Error())
		}
	}
	o.observer.Renew(e)
}
