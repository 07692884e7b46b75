package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is matched by the error of a call on a Locker after its Close
// (acquisitions match ErrNotAcquired too, Extends ErrLockLost).
var ErrClosed = errors.New("redlock: locker closed")

// Close stops the Locker: it stops the renewal of every lock it renews
// (those locks then end at their Until, as if the masters stopped
// answering), refuses later acquisitions and Extends (ErrClosed), and
// waits until every release it sent has its answer or gave up: an
// Unlock's deletes on the masters that had not answered when it returned
// at the quorum, the releases of failed attempts, a waiter's withdrawal,
// and the releases sent again after a failure (until the lock's TTL). So
// a process that Unlocks, Closes and exits leaves nothing on the masters
// that a release could remove. ctx bounds the wait: when it ends first,
// Close returns its error, and the releases go on. Close the Locker
// before the Nodes. Unlock still works after Close (it is never refused),
// but Close does not wait for it. Closing twice waits again.
func (l *Locker) Close(ctx context.Context) error {
	if l == nil || len(l.masters) == 0 {
		return invalid("Close of a Locker not made by New")
	}
	if ctx == nil {
		return invalid("nil context")
	}
	l.closed.Store(true)
	l.renewing.Range(func(k, _ any) bool {
		k.(*Lock).stopRenewal()
		return true
	})
	if err := l.inflight.wait(ctx); err != nil {
		return fmt.Errorf("redlock: close: releases still in flight: %w", err)
	}
	return nil
}

// counter counts calls in flight; wait waits until there are none. It
// allocates nothing unless someone waits.
type counter struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // made by a wait while n > 0, closed when n is 0 again
}

func (c *counter) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counter) done() {
	c.mu.Lock()
	if c.n--; c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
	c.mu.Unlock()
}

// wait returns once no call is in flight, or with ctx's error.
func (c *counter) wait(ctx context.Context) error {
	c.mu.Lock()
	if c.n == 0 {
		c.mu.Unlock()
		return nil
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	zero := c.zero
	c.mu.Unlock()
	select {
	case <-zero:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
