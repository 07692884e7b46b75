package workload

import (
	"sync/atomic"

	"github.com/quorumlock/quorumlock/redlock"
)

// uncertainty is the Observer of a client's fenced Locker (the one its
// reentrant locks use): it counts the acquire calls to a master that failed
// (a lost reply, a reset, a timeout), whose outcome on that master is
// unknown. A reentrant acquire that landed there anyway keeps its hold count
// until the hash's TTL runs out, since neither the failed attempt's
// clean-up nor Unlock releases a master that did not grant (see
// redlock.Reentrant: it may delay other owners, never admit two). The
// reentrant workload then checks that the owner's hash is gone once its TTL
// ran out, not right after the last Unlock.
type uncertainty struct {
	redlock.Observer
	lockErrors atomic.Int64
}

func newUncertainty(next redlock.Observer) *uncertainty {
	if next == nil {
		next = redlock.NopObserver{}
	}
	return &uncertainty{Observer: next}
}

// NodeError counts failed acquire calls, and passes every event on.
func (u *uncertainty) NodeError(e redlock.NodeErrorEvent) {
	if e.Op == "lock" {
		u.lockErrors.Add(1)
	}
	u.Observer.NodeError(e)
}

// mark returns the count of failed acquire calls so far; since reports
// whether any failed after mark m.
func (u *uncertainty) mark() int64        { return u.lockErrors.Load() }
func (u *uncertainty) since(m int64) bool { return u.lockErrors.Load() != m }
