package rueidis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Wake on release: one dedicated rueidis connection per Node, shared by
// every registration, fanned out to the registered Go channels.
//
// A session runs from the first registration to the last unsubscribe. One
// goroutine, its owner, is the only user of the session's connection: it
// takes a dedicated connection from the client (rueidis's Dedicate, never
// the client's shared pipelined connections), installs the message hooks,
// sends SUBSCRIBE and UNSUBSCRIBE to match what the registrations want,
// and on a broken connection takes a new one after a backoff and
// subscribes again. Subscribe and unsubscribe never do I/O themselves:
// they change the wanted state under subscriber.mu and kick the owner, so
// a frozen master blocks only the owner (bounded by the client's timeouts
// and the session's end), never a caller beyond its context.
//
// A channel is ready when a SUBSCRIBE for it returned on the current
// connection. After a reconnect messages may have been lost, so every
// registration of a channel that was ready is woken once when it is
// subscribed again.

var errClosed = errors.New("rueidis: node closed")

const (
	// minRedial and maxRedial bound the doubling backoff between
	// connections of a session.
	minRedial = 50 * time.Millisecond
	maxRedial = 2 * time.Second
)

// subscriber is a Node's pub/sub side. Its zero value (with n set) is ready.
type subscriber struct {
	n      *Node
	mu     sync.Mutex
	closed bool
	cur    *session
	wg     sync.WaitGroup // every session's owner
}

type session struct {
	ctx    context.Context // ends when the session is retired
	cancel context.CancelFunc
	kick   chan struct{} // buffered 1: the owner has work to do

	// Guarded by subscriber.mu.
	chans map[string]*channelState
	nregs int
}

// channelState is a channel of a session; guarded by subscriber.mu. A
// channel the owner unsubscribes leaves the map first, so a registration
// that comes meanwhile gets a new state, subscribed afresh after the
// UNSUBSCRIBE.
type channelState struct {
	regs       map[*registration]struct{}
	subscribed bool          // a SUBSCRIBE returned on the current connection
	ready      chan struct{} // closed at the first SUBSCRIBE that returned
	isReady    bool
	lastErr    error // the last failed connection or SUBSCRIBE
}

type registration struct {
	s       *session
	st      *channelState
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
		return nil, fmt.Errorf("rueidis: %s: subscribe %q: nil channel", n.addr, channel)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("rueidis: %s: subscribe %q: %w", n.addr, channel, err)
	}
	sub := &n.subs
	r, st, err := sub.register(channel, ch)
	if err != nil {
		return nil, err
	}
	unsubscribe = sync.OnceFunc(func() { sub.unregister(r) })
	select {
	case <-st.ready:
		return unsubscribe, nil
	case <-ctx.Done():
		sub.mu.Lock()
		lastErr := st.lastErr
		sub.mu.Unlock()
		unsubscribe()
		if lastErr != nil {
			return nil, fmt.Errorf("rueidis: %s: subscribe %q: %w: %w", n.addr, channel, ctx.Err(), lastErr)
		}
		return nil, fmt.Errorf("rueidis: %s: subscribe %q: %w", n.addr, channel, ctx.Err())
	}
}

// register adds a registration, starting a session as needed, and kicks
// the owner; it returns the channel's state.
func (sub *subscriber) register(channel string, ch chan<- struct{}) (*registration, *channelState, error) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if sub.closed {
		return nil, nil, errClosed
	}
	s := sub.cur
	if s == nil {
		s = &session{kick: make(chan struct{}, 1), chans: make(map[string]*channelState)}
		s.ctx, s.cancel = context.WithCancel(context.Background())
		sub.cur = s
		sub.wg.Go(func() { sub.run(s) })
	}
	st := s.chans[channel]
	if st == nil {
		st = &channelState{regs: make(map[*registration]struct{}), ready: make(chan struct{})}
		s.chans[channel] = st
	}
	r := &registration{s: s, st: st, ch: ch}
	st.regs[r] = struct{}{}
	s.nregs++
	s.wake()
	return r, st, nil
}

// unregister removes r; the last registration of the session retires it.
func (sub *subscriber) unregister(r *registration) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if r.removed {
		return
	}
	r.removed = true
	s := r.s
	delete(r.st.regs, r)
	s.nregs--
	if s.nregs == 0 {
		sub.retire(s)
		return
	}
	s.wake()
}

// retire ends s; called with sub.mu held. Its owner closes its connection.
func (sub *subscriber) retire(s *session) {
	if sub.cur == s {
		sub.cur = nil
	}
	s.cancel()
}

// wake kicks the owner without blocking.
func (s *session) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run is the owner of s: it connects, keeps the subscriptions in step with
// the registrations, and reconnects, until s is retired.
func (sub *subscriber) run(s *session) {
	backoff := minRedial
	for s.ctx.Err() == nil {
		if sub.serve(s) {
			backoff = minRedial
		}
		select {
		case <-s.ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxRedial)
	}
}

// serve runs one connection of s until it breaks or s is retired; it
// reports whether every SUBSCRIBE sent on it succeeded.
func (sub *subscriber) serve(s *session) (healthy bool) {
	dc, release := sub.n.c.Dedicate()
	defer func() {
		dc.Close()
		release()
	}()
	broken := dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) { sub.message(s, m.Channel) },
	})
	healthy = true
	for {
		if err := sub.sync(s, dc); err != nil {
			return false
		}
		select {
		case <-s.ctx.Done():
			return healthy
		case err := <-broken:
			if err == nil {
				err = errors.New("pub/sub connection closed")
			}
			sub.failed(s, err)
			return healthy
		case <-s.kick:
		}
	}
}

// sync sends what the registrations want and this connection does not
// have yet: SUBSCRIBE for channels with registrations, UNSUBSCRIBE for
// channels without.
func (sub *subscriber) sync(s *session, dc rueidis.DedicatedClient) error {
	sub.mu.Lock()
	var want, drop []string
	for channel, st := range s.chans {
		switch {
		case len(st.regs) > 0 && !st.subscribed:
			want = append(want, channel)
		case len(st.regs) == 0:
			delete(s.chans, channel)
			if st.subscribed {
				drop = append(drop, channel)
			}
		}
	}
	sub.mu.Unlock()
	if len(drop) > 0 {
		slices.Sort(drop)
		if err := dc.Do(s.ctx, dc.B().Unsubscribe().Channel(drop...).Build()).Error(); err != nil {
			sub.failed(s, err)
			return err
		}
	}
	if len(want) == 0 {
		return nil
	}
	slices.Sort(want)
	if err := dc.Do(s.ctx, dc.B().Subscribe().Channel(want...).Build()).Error(); err != nil {
		sub.failed(s, err)
		return err
	}
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, channel := range want {
		st := s.chans[channel]
		if st == nil {
			continue // no registration left: the next sync unsubscribes it
		}
		st.subscribed = true
		st.lastErr = nil
		if st.isReady {
			st.wake() // subscribed again after a reconnect
		} else {
			st.isReady = true
			close(st.ready)
		}
	}
	return nil
}

// failed records err for the channels still waiting for their first
// SUBSCRIBE and marks every channel as not subscribed: the connection is
// given up.
func (sub *subscriber) failed(s *session, err error) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for _, st := range s.chans {
		st.subscribed = false
		if !st.isReady {
			st.lastErr = err
		}
	}
}

// message wakes the registrations of channel; called by rueidis's reader.
func (sub *subscriber) message(s *session, channel string) {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if st := s.chans[channel]; st != nil {
		st.wake()
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

// close retires the session and waits for every owner; later Subscribes
// fail.
func (sub *subscriber) close() {
	sub.mu.Lock()
	sub.closed = true
	if s := sub.cur; s != nil {
		sub.retire(s)
	}
	sub.mu.Unlock()
	sub.wg.Wait()
}
