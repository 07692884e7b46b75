package pubsub

import (
	"errors"
	"sync"
)

// errConnClosed is Feed.Receive's error for a broken channel that
// delivered no error.
var errConnClosed = errors.New("pubsub: connection closed")

// Feed turns the callbacks of a client that hands pub/sub events to hooks
// on a goroutine of its own (rueidis's and valkey-go's PubSubHooks) into
// what Conn.Receive returns: the hooks Push each event, and Receive takes
// them in order. Push waits until Receive takes the event or the Feed is
// closed, which the Registry's reader never makes long, so no event is
// dropped and none needs a buffer. The zero value is not usable; NewFeed
// makes one.
type Feed struct {
	events chan Event
	done   chan struct{}
	once   sync.Once
}

// NewFeed returns an open Feed.
func NewFeed() *Feed {
	return &Feed{events: make(chan Event), done: make(chan struct{})}
}

// Push hands ev to Receive, and returns once Receive took it or the Feed
// was closed.
func (f *Feed) Push(ev Event) {
	select {
	case f.events <- ev:
	case <-f.done:
	}
}

// Receive returns the next event pushed, or an error once the Feed is
// closed or broken delivers (a nil error from broken, or a closed broken,
// reads as a closed connection). broken is the client's signal that the
// connection failed; nil if it has none.
func (f *Feed) Receive(broken <-chan error) (Event, error) {
	select {
	case ev := <-f.events:
		return ev, nil
	case err := <-broken:
		if err == nil {
			err = errConnClosed
		}
		return Event{}, err
	case <-f.done:
		return Event{}, ErrClosed
	}
}

// Close ends a Receive in progress and every later one, and releases
// every Push; calls after the first do nothing.
func (f *Feed) Close() { f.once.Do(func() { close(f.done) }) }
