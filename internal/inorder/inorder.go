// Package inorder runs a Node's calls for a client library whose calls
// cannot be abandoned: each call runs on a goroutine of its own, so that
// its caller can return when its context ends while the call goes on (its
// command may already be on a connection), and calls are kept from
// overtaking the calls whose callers gave up before them.
//
// The rule it keeps is the algorithm's: a release on a master goes out only
// after that master's acquire returned. With a client that spreads
// commands over several connections (rueidis's multiplexed pipes, a
// go-redis pool), an acquire whose caller returned at its deadline may
// still wait behind a slow command on one connection, while the release
// that follows goes out at once on another and reaches the master first:
// it deletes nothing, the acquire lands after it, and the lock stays on
// that master until its TTL. So a call that starts while earlier calls
// are still running without their callers (orphans) sends its command
// only after all of them returned.
package inorder

import (
	"context"
	"sync"
)

// Calls orders the calls of one Node. The zero value is ready; a Calls
// must not be copied after first use.
type Calls struct {
	mu sync.Mutex
	// tail is closed once every call orphaned so far has returned; nil
	// when none is left.
	tail chan struct{}
}

// call is one Do.
type call struct {
	done chan struct{} // closed, under Calls.mu, when send returned
	tail chan struct{} // set when its caller gave up: closed after it and the orphans before it
	prev chan struct{} // the tail before it then
}

// Do runs send on a goroutine of its own, once the calls that were orphans
// when Do was called have returned, and waits for it or for ctx. It
// reports whether send returned; when ctx ends first, Do returns false at
// once, and send still runs (later calls then wait for it). send must not
// block forever: it is bounded by the client's own timeouts.
func (c *Calls) Do(ctx context.Context, send func()) bool {
	c.mu.Lock()
	after := c.tail
	c.mu.Unlock()
	k := &call{done: make(chan struct{})}
	go c.run(k, after, send)
	select {
	case <-k.done:
		return true
	case <-ctx.Done():
	}
	c.mu.Lock()
	select {
	case <-k.done:
		c.mu.Unlock()
		return true // it returned too: keep its result
	default:
	}
	k.tail, k.prev = make(chan struct{}), c.tail
	c.tail = k.tail
	c.mu.Unlock()
	return false
}

// run is k's goroutine: it waits for the orphans before k, sends, and,
// when k was orphaned meanwhile, closes k's tail once the orphans before
// k have returned too.
func (c *Calls) run(k *call, after chan struct{}, send func()) {
	if after != nil {
		<-after
	}
	send()
	c.mu.Lock()
	close(k.done)
	tail, prev := k.tail, k.prev
	c.mu.Unlock()
	if tail == nil {
		return
	}
	if prev != nil {
		<-prev
	}
	c.mu.Lock()
	if c.tail == tail {
		c.tail = nil
	}
	c.mu.Unlock()
	close(tail)
}
