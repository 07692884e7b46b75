package pubsub

import (
	"context"
	"errors"
	"sync"
)

// errConnClosed is HookConn.Receive's error for a Broken channel that
// delivered no error.
var errConnClosed = errors.New("pubsub: connection closed")

// HookConn is a Conn over a client that hands what the master sends on a
// pub/sub connection to hooks, on a goroutine of its own (rueidis's and
// valkey-go's PubSubHooks): the hooks call Message and Subscription, and
// Receive returns what they were given, in order. A hook waits until
// Receive takes its event or the HookConn is closed, which the Registry's
// reader never makes long, so no event is dropped and none is buffered.
//
// NewHookConn makes one; set its fields before a Registry uses it.
type HookConn struct {
	// Send sends SUBSCRIBE (subscribe true) or UNSUBSCRIBE for channels on
	// the client's connection. The confirmations must reach Subscription.
	Send func(ctx context.Context, subscribe bool, channels []string) error
	// Broken, if not nil, delivers the error that broke the connection (a
	// nil error, or a closed Broken, reads as a closed connection).
	Broken <-chan error
	// Release closes the client's connection; Close calls it once.
	Release func()

	events chan Event
	done   chan struct{}
	once   sync.Once
}

var _ Conn = (*HookConn)(nil)

// NewHookConn returns an open HookConn without its fields.
func NewHookConn() *HookConn {
	return &HookConn{events: make(chan Event), done: make(chan struct{})}
}

// Message is the hook for a message published on channel.
func (c *HookConn) Message(channel string) { c.push(Event{Kind: Message, Channel: channel}) }

// Subscription is the hook for a subscription event: kind "subscribe" or
// "unsubscribe" (others are ignored) confirms the command for channel.
func (c *HookConn) Subscription(kind, channel string) {
	switch kind {
	case "subscribe":
		c.push(Event{Kind: Subscribed, Channel: channel})
	case "unsubscribe":
		c.push(Event{Kind: Unsubscribed, Channel: channel})
	}
}

func (c *HookConn) push(ev Event) {
	select {
	case c.events <- ev:
	case <-c.done:
	}
}

// Subscribe implements Conn with Send.
func (c *HookConn) Subscribe(ctx context.Context, channels ...string) error {
	return c.Send(ctx, true, channels)
}

// Unsubscribe implements Conn with Send.
func (c *HookConn) Unsubscribe(ctx context.Context, channels ...string) error {
	return c.Send(ctx, false, channels)
}

// Receive returns the next event a hook was given, or an error once the
// connection broke (Broken) or the HookConn is closed.
func (c *HookConn) Receive() (Event, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case err := <-c.Broken:
		if err == nil {
			err = errConnClosed
		}
		return Event{}, err
	case <-c.done:
		return Event{}, ErrClosed
	}
}

// Close ends a Receive in progress and every later one, releases every
// hook that waits, and calls Release; calls after the first do nothing.
func (c *HookConn) Close() error {
	c.once.Do(func() {
		close(c.done)
		if c.Release != nil {
			c.Release()
		}
	})
	return nil
}
