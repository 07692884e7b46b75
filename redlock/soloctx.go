package redlock

import (
	"context"
	"sync"
	"time"
)

// soloCtx is the context of runOne's call: the values of the operation's
// context without its cancellation, and the node timeout's deadline, with
// a Done channel (and its timer) made only for a Node that asks for it. It
// lives in runOne's oneResult, so that it costs no allocation of its own,
// as quorum's node context does for a fan-out.
type soloCtx struct {
	parent   context.Context
	deadline time.Time

	mu    sync.Mutex
	done  chan struct{} // made by the first Done
	timer *time.Timer   // closes done at the deadline
	ended bool          // done is closed, or the call is over (stop)
}

func (c *soloCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *soloCtx) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done == nil {
		c.done = make(chan struct{})
		switch d := time.Until(c.deadline); {
		case c.ended || d <= 0:
			close(c.done)
			c.ended = true
		default:
			c.timer = time.AfterFunc(d, c.expire)
		}
	}
	return c.done
}

func (c *soloCtx) Err() error {
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended && c.done != nil {
		return context.Canceled // stopped early: the call is over
	}
	return nil
}

func (c *soloCtx) Value(key any) any { return c.parent.Value(key) }

func (c *soloCtx) String() string { return "redlock.soloContext" }

// expire closes done at the deadline.
func (c *soloCtx) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.ended = true
		close(c.done)
	}
}

// stop ends the context once the call returned, as a cancel func does:
// the timer stops, and a Done channel closes.
func (c *soloCtx) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.timer != nil {
		c.timer.Stop()
	}
	if !c.ended {
		c.ended = true
		if c.done != nil {
			close(c.done)
		}
	}
}
