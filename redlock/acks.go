package redlock

// The invariant this file keeps: on each master, a lock's release (the
// clean-up of a failed attempt, Unlock, a writer's withdrawal) and its
// Extend go out only after that master's acquire call of the same attempt
// has returned. A release that overtook its acquire would find nothing to
// delete, and the acquire landing after it would leave the key held on that
// master until its TTL ran out; an Extend that overtook it would be refused
// and count as lost. The attempt acks each master's acquire as it returns
// (attempt.go); every later call to that master for the same lock waits for
// the ack (fanOut), and an Unlock whose caller stops waiting leaves its
// release to run at the ack (acks.runLater), so the release is always sent.

import (
	"context"
	"fmt"
	"sync"

	"github.com/quorumlock/quorumlock/quorum"
)

// acks tells which nodes' acquire calls of one attempt have returned, and
// which of them granted it. It allocates nothing unless a release has to
// wait.
type acks struct {
	mu       sync.Mutex
	returned []bool
	granted  []bool
	changed  chan struct{}      // closed at the next ack; made by a waiter
	later    map[int]func(bool) // run at node i's ack, with its grant
}

func newAcks(n int) *acks {
	b := make([]bool, 2*n)
	return &acks{returned: b[:n], granted: b[n:]}
}

func (a *acks) ack(i int, granted bool) {
	a.mu.Lock()
	a.returned[i], a.granted[i] = true, granted
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
	f := a.later[i]
	delete(a.later, i)
	a.mu.Unlock()
	if f != nil {
		f(granted)
	}
}

// runLater runs f when node i's acquire returns, on the goroutine of that call;
// it reports false, running nothing, when the acquire has returned already.
func (a *acks) runLater(i int, f func(granted bool)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.returned[i] {
		return false
	}
	if a.later == nil {
		a.later = make(map[int]func(bool))
	}
	a.later[i] = f
	return true
}

// wait returns once node i's acquire has returned, telling whether it
// granted, or with ctx's error. A nil *acks never waits and reports a grant.
func (a *acks) wait(ctx context.Context, i int) (granted bool, err error) {
	if a == nil {
		return true, nil
	}
	for {
		a.mu.Lock()
		if a.returned[i] {
			granted := a.granted[i]
			a.mu.Unlock()
			return granted, nil
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// fanOut runs a counting script on every node, deciding at the quorum.
// With acks, a node's call waits until that node's acquire has returned;
// with grantedOnly, a node that did not grant that acquire is not called
// and counts as a refusal. then, if not nil, runs after each node's call
// returned (see quorum.Options.Then).
func (l *Locker) fanOut(ctx context.Context, op string, acks *acks, grantedOnly bool, s script, keys []string, then func(i int, v quorum.Vote), args ...any) (*quorum.Result, error) {
	c := s.with(keys, args...)
	return quorum.Do(ctx, len(l.nodes), quorum.Options{Need: l.quorum, Timeout: l.nodeTimeout, Then: then},
		func(ctx context.Context, i int) quorum.Vote {
			granted, err := acks.wait(ctx, i)
			if err != nil {
				if op == opUnlock && acks.runLater(i, func(granted bool) {
					if granted || !grantedOnly {
						rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
						defer cancel()
						l.observe(op, i, c.count(rctx, l.nodes[i]))
					}
				}) {
					err = fmt.Errorf("redlock: unlock %s: released once its acquire returns: %w", l.nodes[i].Addr(), err)
				}
				return l.observe(op, i, quorum.Vote{Err: err})
			}
			if grantedOnly && !granted {
				return quorum.Vote{}
			}
			return l.observe(op, i, c.count(ctx, l.nodes[i]))
		})
}
