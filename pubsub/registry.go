package pubsub

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The registrations of a Registry. While one exists, a session runs
// (session.go) and does all the I/O. Subscribe and the unsubscribe
// functions never do I/O themselves: they change the wanted state under
// Registry.mu and kick the session's writer, so a frozen master cannot
// block them beyond their context. The last unsubscribe (or Close) retires
// the session: its connection is closed, which ends any receive or send in
// progress, and its goroutines exit.

// ErrClosed is the error of Subscribe on a closed Registry.
var ErrClosed = errors.New("pubsub: registry closed")

// DefaultPingPeriod is the health check's period when Config.PingPeriod is
// zero.
const DefaultPingPeriod = 3 * time.Second

// Config configures a Registry.
type Config struct {
	// Dial opens one pub/sub connection to the master (required). It is
	// called on the first Subscribe, and again, after a backoff, whenever
	// the connection broke while registrations remain. Its context ends
	// when the connection is no longer wanted; the dial must also be
	// bounded by the client's own dial timeout.
	Dial func(ctx context.Context) (Conn, error)
	// PingPeriod is how often a connection with subscriptions is pinged
	// when its Conn is a Pinger; a connection that sent nothing between
	// two pings is replaced. Zero means DefaultPingPeriod.
	PingPeriod time.Duration
}

// Registry shares one pub/sub connection to a master among every
// registration of a Go channel on a master's channel. The zero value is
// not usable; New makes one. Its methods are safe for concurrent use.
type Registry struct {
	dial func(ctx context.Context) (Conn, error)
	ping time.Duration

	mu     sync.Mutex
	closed bool
	cur    *session       // the running session; nil while nothing is registered
	wg     sync.WaitGroup // goroutines of all sessions, current and retired
}

// New returns a Registry that dials with cfg.Dial. It does not connect:
// the first Subscribe does. It panics if cfg.Dial is nil.
func New(cfg Config) *Registry {
	if cfg.Dial == nil {
		panic("pubsub: New with a nil Config.Dial")
	}
	if cfg.PingPeriod <= 0 {
		cfg.PingPeriod = DefaultPingPeriod
	}
	return &Registry{dial: cfg.Dial, ping: cfg.PingPeriod}
}

type registration struct {
	s       *session
	channel string
	ch      chan<- struct{}
	removed bool // guarded by Registry.mu
}

// Subscribe registers ch to receive a non-blocking send (struct{}{}) each
// time a message is published on channel at the master. It returns once
// the master confirmed the subscription, or when ctx ends; unsubscribe
// removes the registration (idempotent, and it never blocks on the
// master); when the last registration of a channel goes, the channel is
// unsubscribed, and when the last of all goes, the connection is closed.
// Subscribe implements redlock.Subscriber.
//
// A full ch misses the message: the send never blocks, so a receiver that
// must not miss a message should also poll. When the connection breaks, it
// is redialed with a jittered backoff while any registration exists, every
// channel is subscribed again, and every registration of a channel that
// was subscribed gets one send once it is subscribed again, since messages
// may have been lost in between.
//
// On error nothing stays registered and unsubscribe is nil. An error of a
// ctx that ended stays matchable with errors.Is(err, ctx.Err()); it also
// carries the last connection error, if any (a refused dial, a wrong
// password), matchable with errors.Is and errors.As. After Close,
// Subscribe fails with ErrClosed.
func (r *Registry) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	if ch == nil {
		return nil, fmt.Errorf("pubsub: subscribe %q: nil channel", channel)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pubsub: subscribe %q: %w", channel, err)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("pubsub: subscribe %q: %w", channel, ErrClosed)
	}
	s := r.cur
	if s == nil {
		s = newSession(r)
		r.cur = s
		r.wg.Add(1)
		go s.run()
	}
	reg := &registration{s: s, channel: channel, ch: ch}
	st := s.chans[channel]
	if st == nil {
		st = &channelState{regs: make(map[*registration]struct{}), ready: make(chan struct{})}
		s.chans[channel] = st
	}
	st.regs[reg] = struct{}{}
	s.nregs++
	ready := st.ready
	s.markDirty(channel)
	r.mu.Unlock()

	unsubscribe = func() { r.unregister(reg) }
	select {
	case <-ready:
		return unsubscribe, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-s.stop: // only Close retires a session that has registrations
		err = ErrClosed
	}
	unsubscribe()
	r.mu.Lock()
	lastErr := s.lastErr
	r.mu.Unlock()
	if lastErr != nil && err != ErrClosed {
		return nil, fmt.Errorf("pubsub: subscribe %q: %w (last connection error: %w)", channel, err, lastErr)
	}
	return nil, fmt.Errorf("pubsub: subscribe %q: %w", channel, err)
}

// unregister removes reg; the last registration of the session retires it.
func (r *Registry) unregister(reg *registration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if reg.removed {
		return
	}
	reg.removed = true
	s := reg.s
	st := s.chans[reg.channel]
	delete(st.regs, reg)
	s.nregs--
	if len(st.regs) == 0 {
		if st.sent == sentNone && st.inflight == 0 {
			delete(s.chans, reg.channel) // nothing was sent for it on this connection
		} else {
			s.markDirty(reg.channel)
		}
	}
	if s.nregs == 0 && r.cur == s {
		r.cur = nil
		s.retire()
	}
}

// Close retires the running session, closes its connection and waits for
// every goroutine of the Registry; later Subscribes fail with ErrClosed,
// and the unsubscribe functions of earlier ones become no-ops. A Close
// does not wait for a frozen master beyond the client's own timeouts
// (Conn.Close).
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	if s := r.cur; s != nil {
		r.cur = nil
		s.retire()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}
