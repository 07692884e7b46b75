package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gomodule/redigo/redis"
)

// The pub/sub side of a Node: one shared subscriber connection per Node,
// multiplexing every channel that has at least one registration.
//
// This file keeps the registrations; while one exists, a session runs
// (pubsub_session.go) and does all the I/O. Subscribe and the unsubscribe functions never do
// I/O themselves: they change the wanted state under notifier.mu and kick
// the writer, so a frozen master cannot block them beyond their context.
// The last unsubscribe (or Node.Close) retires the session: its connection
// is closed, which ends any read or write in progress, and its goroutines
// exit.

var errNodeClosed = errors.New("node closed")

// notifier is a Node's subscriber side. It knows the Node only through
// what it was given: the address (for errors) and a dial function.
type notifier struct {
	addr string
	dial func(ctx context.Context) (redis.Conn, error) // one pub/sub connection, bounded by ctx

	mu     sync.Mutex
	closed bool
	cur    *session       // the running session; nil while nothing is registered
	wg     sync.WaitGroup // goroutines of all sessions, current and retired
}

func newNotifier(addr string, dial func(ctx context.Context) (redis.Conn, error)) *notifier {
	return &notifier{addr: addr, dial: dial}
}

type registration struct {
	s       *session
	channel string
	ch      chan<- struct{}
	removed bool // guarded by notifier.mu
}

// Subscribe registers ch to receive a non-blocking send (struct{}{}) each
// time a message is published on channel at this master. It returns once the
// subscription is confirmed by the server (SUBSCRIBE reply received) or ctx
// ends. unsubscribe removes the registration (idempotent); when the last
// registration for a channel goes, the node UNSUBSCRIBEs it.
//
// All registrations of a Node share one pub/sub connection, dialed with the
// Node's address, credentials and TLS settings on the first Subscribe and
// closed when the last registration goes or the Node is closed. A full ch
// misses the message: the send never blocks, so a receiver that must not
// miss a release should also poll. The connection is health-checked with a
// PING every few seconds; when it breaks, it is redialed with backoff while
// any registration exists, every channel is subscribed again, and every
// registered ch then gets one wake-up, since messages may have been lost in
// between.
//
// On error nothing stays registered and unsubscribe is nil. A ctx error
// stays matchable with errors.Is(err, ctx.Err()); the error also carries the
// last connection error, if any (a wrong password, a refused dial).
// Neither Subscribe nor unsubscribe blocks on a frozen master beyond ctx.
func (n *Node) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	return n.notify.subscribe(ctx, channel, ch)
}

func (nt *notifier) subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	if ch == nil {
		return nil, fmt.Errorf("pool: %s: subscribe %q: nil channel", nt.addr, channel)
	}
	if nt.addr == "" {
		return nil, fmt.Errorf("pool: subscribe %q: %w", channel, ErrNoAddr)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pool: %s: subscribe %q: %w", nt.addr, channel, err)
	}
	nt.mu.Lock()
	if nt.closed {
		nt.mu.Unlock()
		return nil, fmt.Errorf("pool: %s: subscribe %q: %w", nt.addr, channel, errNodeClosed)
	}
	s := nt.cur
	if s == nil {
		s = newSession(nt)
		nt.cur = s
		nt.wg.Add(1)
		go s.run()
	}
	r := &registration{s: s, channel: channel, ch: ch}
	st := s.chans[channel]
	if st == nil {
		st = &channelState{regs: make(map[*registration]struct{}), ready: make(chan struct{})}
		s.chans[channel] = st
	}
	st.regs[r] = struct{}{}
	s.nregs++
	ready := st.ready
	s.markDirty(channel)
	nt.mu.Unlock()

	unsubscribe = func() { nt.unregister(r) }
	select {
	case <-ready:
		return unsubscribe, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.stop: // only Close retires a session that has registrations
		err = errNodeClosed
	}
	unsubscribe()
	nt.mu.Lock()
	lastErr := s.lastErr
	nt.mu.Unlock()
	if lastErr != nil && err != errNodeClosed {
		return nil, fmt.Errorf("pool: %s: subscribe %q: %w (last connection error: %w)", nt.addr, channel, err, lastErr)
	}
	return nil, fmt.Errorf("pool: %s: subscribe %q: %w", nt.addr, channel, err)
}

// unregister removes r; the last registration of the session retires it.
func (nt *notifier) unregister(r *registration) {
	nt.mu.Lock()
	if r.removed {
		nt.mu.Unlock()
		return
	}
	r.removed = true
	s := r.s
	st := s.chans[r.channel]
	delete(st.regs, r)
	s.nregs--
	if len(st.regs) == 0 {
		if st.sent == sentNone && st.inflight == 0 {
			delete(s.chans, r.channel) // nothing was sent for it on this connection
		} else {
			s.markDirty(r.channel)
		}
	}
	var c redis.Conn
	if s.nregs == 0 && nt.cur == s {
		nt.cur = nil
		c = s.retire()
	}
	nt.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// close retires the running session and waits for every session's
// goroutines; closing a session's connection ends its I/O at once.
func (nt *notifier) close() {
	nt.mu.Lock()
	nt.closed = true
	var c redis.Conn
	if s := nt.cur; s != nil {
		nt.cur = nil
		c = s.retire()
	}
	nt.mu.Unlock()
	if c != nil {
		c.Close()
	}
	nt.wg.Wait()
}
