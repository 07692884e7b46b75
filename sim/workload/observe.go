package workload

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// The Observer of a client's Lockers. Events are attributed to the hold
// they are about through the context of its acquisition (or Extend),
// which carries the hold's ref: every renewal and Extend becomes an
// Extended event with the Until afterwards, a failed renewal a
// RenewFailed (for want of answers or not), a loss a Lost. Every failed
// call to a master is noted on the client, with the master and the
// operation, for the leftover checks' excuses.

type refKey struct{}

// ref is what the observer attributes events to: one hold (or one call
// that has not granted yet).
type ref struct {
	id atomic.Int64 // the hold's id in the history, once granted
}

// withRef returns ctx carrying a new ref.
func withRef(ctx context.Context) (context.Context, *ref) {
	r := &ref{}
	return context.WithValue(ctx, refKey{}, r), r
}

func refOf(ctx context.Context) *ref {
	if ctx == nil {
		return nil
	}
	r, _ := ctx.Value(refKey{}).(*ref)
	return r
}

// nodeFailure is one failed call of a client.
type nodeFailure struct {
	at     time.Time
	master int
	op     string
}

type observer struct {
	redlock.NopObserver
	c *client
}

// master is the index of the master named addr ("m3").
func masterIndex(addr string) int {
	n := 0
	for _, ch := range strings.TrimPrefix(addr, "m") {
		n = n*10 + int(ch-'0')
	}
	return n
}

func (o *observer) NodeError(e redlock.NodeErrorEvent) {
	m := masterIndex(e.Addr)
	c := o.c
	c.mu.Lock()
	c.failures = append(c.failures, nodeFailure{at: time.Now(), master: m, op: e.Op})
	c.mu.Unlock()
}

func (o *observer) Renew(e redlock.RenewEvent) {
	r := refOf(e.Context())
	if r == nil {
		return
	}
	id := r.id.Load()
	if id == 0 {
		return
	}
	h := o.c.r.H
	now := time.Now()
	h.Extend(id, now, e.Until)
	if e.Err != nil && e.Auto {
		h.RenewFail(id, now, obstructed(e.Err), e.Err.Error())
	}
}

func (o *observer) Lost(e redlock.LostEvent) {
	if r := refOf(e.Context()); r != nil {
		if id := r.id.Load(); id != 0 {
			o.c.r.H.Lose(id, time.Now())
		}
	}
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
