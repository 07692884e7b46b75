package goredis

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Wake on release: one go-redis PubSub per Node, shared by every
// registration, fanned out to the registered Go channels.
//
// A session runs from the first registration to the last unsubscribe: its
// PubSub (one connection, which go-redis health-checks, redials and
// resubscribes on its own) and the goroutine that reads it. Subscribe and
// unsubscribe never do I/O themselves: they change the wanted state under
// subscriber.mu and start a sync, which sends SUBSCRIBE or UNSUBSCRIBE under
// session.wmu after reading the latest wanted state, so the last command
// sent for a channel is always the one its latest state wants. A frozen
// master therefore blocks only syncs (bounded by the client's timeouts),
// never a caller beyond its context.
//
// A channel is ready when the master confirmed its SUBSCRIBE. A
// confirmation the session was not waiting for is go-redis resubscribing
// after a reconnect: messages may have been lost in between, so every
// registration of the channel is woken once.

var errClosed = errors.New("goredis: node closed")

// subscriber is a Node's pub/sub side. Its zero value (with n set) is ready.
type subscriber struct {
	n      *Node
	mu     sync.Mutex
	closed bool
	cur    *session
	wg     sync.WaitGroup // every goroutine of every session
}

type session struct {
	ps      *redis.PubSub
	wmu     sync.Mutex               // held while a sync sends
	reading bool                     // guarded by wmu: the reader goroutine runs
	chans   map[string]*channelState // guarded by subscriber.mu
	nregs   int                      // guarded by subscriber.mu
}

// channelState is a channel of a session; guarded by subscriber.mu.
type channelState struct {
	regs      map[*registration]struct{}
	sent      bool // the last command sent is SUBSCRIBE
	pending   int  // SUBSCRIBEs sent and not yet confirmed
	confirmed bool
	ready     chan struct{} // closed when confirmed
	lastErr   error         // the last failed send
}

type registration struct {
	s       *session
	channel string
	ch      chan<- struct{}
	removed bool // guarded by subscriber.mu
}

// Subscribe registers ch to receive a non-blocking send for every message
// published on channel at this master, until unsubscribe is called
// (idempotent). It returns once the master confirmed the subscription, or
// with an error matching ctx.Err() when ctx ends first; on error nothing
// stays registered. A full ch misses the message, so a waiter must also
// poll. After a reconnect every registration of a channel is woken once,
// since messages may have been lost.
func (n *Node) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	if ch == nil {
		return nil, fmt.Errorf("goredis: %s: subscribe %q: nil channel", n.addr, channel)
	}
	if n.err != nil {
		return nil, n.err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("goredis: %s: subscribe %q: %w", n.addr, channel, err)
	}
	sub := &n.subs
	r, ready, err := sub.register(channel, ch)
	if err != nil {
		return nil, err
	}
	unsubscribe = sync.OnceFunc(func() { sub.unregister(r) })
	select {
	case <-ready:
		return unsubscribe, nil
	case <-ctx.Done():
		sub.mu.Lock()
		lastErr := r.s.chans[channel].lastErr
		sub.mu.Unlock()
		unsubscribe()
		if lastErr != nil {
			return nil, fmt.Errorf("goredis: %s: subscribe %q: %w: %w", n.addr, channel, ctx.Err(), lastErr)
		}
		return nil, fmt.Errorf("goredis: %s: subscribe %q: %w", n.addr, channel, ctx.Err())
	}
}

// register adds a registration, starting a session and a sync as needed,
// and returns the channel's ready signal.
func (sub *subscriber) register(channel string, ch chan<- struct{}) (*registration, <-chan struct{}, error) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return nil, nil, errClosed
	}
	s := sub.cur
	if s == nil {
		s = &session{ps: sub.n.c.Subscribe(context.Background()), chans: make(map[string]*channelState)}
		sub.cur = s
	}
	st := s.chans[channel]
	if st == nil {
		st = &channelState{regs: make(map[*registration]struct{}), ready: make(chan struct{})}
		s.chans[channel] = st
	}
	r := &registration{s: s, channel: channel, ch: ch}
	st.regs[r] = struct{}{}
	s.nregs++
	if !st.sent {
		sub.wg.Go(func() { sub.sync(s, channel) })
	}
	return r, st.ready, nil
}

// unregister removes r; the last registration of a channel unsubscribes it,
// the last of the session retires the session.
func (sub *subscriber) unregister(r *registration) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if r.removed {
		return
	}
	r.removed = true
	s := r.s
	st := s.chans[r.channel]
	delete(st.regs, r)
	s.nregs--
	if s.nregs == 0 {
		sub.retire(s)
		return
	}
	if len(st.regs) == 0 {
		sub.wg.Go(func() { sub.sync(s, r.channel) })
	}
}

// retire ends s; called with sub.mu held. Closing the PubSub ends its
// reader goroutine; it is done on a goroutine of its own because go-redis
// holds the PubSub's lock during a send, which a frozen master can prolong.
func (sub *subscriber) retire(s *session) {
	if sub.cur == s {
		sub.cur = nil
	}
	sub.wg.Go(func() { _ = s.ps.Close() })
}

// sync sends what channel's latest state wants, if it differs from what was
// last sent; a channel left without registrations is forgotten.
func (sub *subscriber) sync(s *session, channel string) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	sub.mu.Lock()
	if sub.cur != s {
		sub.mu.Unlock()
		return // retired
	}
	st := s.chans[channel]
	if st == nil {
		sub.mu.Unlock()
		return
	}
	subscribe := len(st.regs) > 0
	send := subscribe != st.sent
	if subscribe {
		if send {
			st.sent = true
			st.pending++
		}
	} else {
		// A confirmation still due for this state is then ignored; a
		// later state of the channel may take it for its own, which only
		// lets its Subscribe return a little early (the waiter polls too).
		delete(s.chans, channel)
	}
	sub.mu.Unlock()
	if !send {
		return
	}
	var err error
	if subscribe {
		err = s.ps.Subscribe(context.Background(), channel)
	} else {
		err = s.ps.Unsubscribe(context.Background(), channel)
	}
	if err != nil && subscribe {
		// go-redis keeps the channel and subscribes it when it reconnects.
		sub.mu.Lock()
		st.lastErr = err
		sub.mu.Unlock()
	}
	if !s.reading {
		// The reader starts once the PubSub has a connection and a
		// channel, so that it never waits on an empty subscription.
		s.reading = true
		msgs := s.ps.ChannelWithSubscriptions()
		sub.wg.Go(func() {
			for msg := range msgs {
				sub.handle(s, msg)
			}
		})
	}
}

// handle processes one message of s's PubSub.
func (sub *subscriber) handle(s *session, msg any) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	switch m := msg.(type) {
	case *redis.Message:
		if st := s.chans[m.Channel]; st != nil {
			st.wake()
		}
	case *redis.Subscription:
		st := s.chans[m.Channel]
		if st == nil || m.Kind != "subscribe" {
			return
		}
		switch {
		case st.pending > 0:
			st.pending--
		case st.confirmed:
			st.wake() // resubscribed after a reconnect
		}
		if st.pending == 0 && st.sent && !st.confirmed {
			st.confirmed = true
			st.lastErr = nil
			close(st.ready)
		}
	}
}

// wake sends to every registration without blocking.
func (st *channelState) wake() {
	for r := range st.regs {
		select {
		case r.ch <- struct{}{}:
		default:
		}
	}
}

// close retires the session and waits for every goroutine; later
// Subscribes fail.
func (sub *subscriber) close() {
	sub.mu.Lock()
	sub.closed = true
	if s := sub.cur; s != nil {
		sub.retire(s)
	}
	sub.mu.Unlock()
	sub.wg.Wait()
}
