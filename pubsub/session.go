package pubsub

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// One session of a Registry (see registry.go): from the first registration
// to the last unsubscribe, across any number of connections. One goroutine
// dials, receives and redials (the only caller of Conn.Receive), and for
// each connection one writer goroutine sends SUBSCRIBE, UNSUBSCRIBE and
// the health PINGs (the only caller of Conn.Subscribe, Unsubscribe and
// Ping), so the one-reader/one-writer rule of a connection holds by
// construction.
//
// The state of each channel on the current connection is what the writer
// last sent for it (sent), how many of its commands the master has not
// confirmed yet (inflight), and whether it is subscribed as the master
// confirmed (confirmed). Confirmations come in the order of the commands,
// so a channel is confirmed when the answer to its latest command arrives
// and that command was a SUBSCRIBE.

const (
	// minRedial and maxRedial bound the jittered, doubling redial backoff.
	minRedial = 50 * time.Millisecond
	maxRedial = 2 * time.Second
)

// errNoReply is the connection error of a connection that answered
// nothing between two health PINGs.
var errNoReply = errors.New("pubsub: no reply to the health PING")

// session is one run of the subscriber. All fields below the first block
// are guarded by Registry.mu.
type session struct {
	r      *Registry
	stop   chan struct{}   // closed when the session is retired
	ctx    context.Context // cancelled when the session is retired: ends a dial or a send
	cancel context.CancelFunc
	kick   chan struct{} // buffered 1: the writer has work to do

	conn    *liveConn                // the live connection, nil while (re)dialing
	chans   map[string]*channelState // channels with registrations or replies due
	dirty   map[string]struct{}      // channels whose wanted state may differ from what was sent
	nregs   int                      // registrations in this session
	lastErr error                    // the last dial or connection error, cleared by a confirmation
}

// The last command sent for a channel on the current connection.
const (
	sentNone = iota
	sentSubscribe
	sentUnsubscribe
)

// channelState is one channel of a session.
type channelState struct {
	regs      map[*registration]struct{}
	sent      int           // sentNone, sentSubscribe or sentUnsubscribe
	inflight  int           // commands sent for the channel and not yet confirmed
	confirmed bool          // subscribed on the current connection, as the master confirmed
	ready     chan struct{} // closed when confirmed becomes true; replaced when it turns false
	wake      bool          // wake every registration once the channel is confirmed again
}

// liveConn is a Conn in use: it is closed once, by whoever first fails it
// or retires it, and it keeps the first error that failed it.
type liveConn struct {
	Conn
	once  sync.Once
	err   error       // the first failure; written once, in once
	heard atomic.Bool // the master sent something since the last health PING
}

// fail records err as the connection's error, unless it already failed,
// and closes it.
func (c *liveConn) fail(err error) {
	c.once.Do(func() {
		c.err = err
		c.Conn.Close()
	})
}

func newSession(r *Registry) *session {
	ctx, cancel := context.WithCancel(context.Background())
	return &session{
		r:      r,
		stop:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
		kick:   make(chan struct{}, 1),
		chans:  make(map[string]*channelState),
		dirty:  make(map[string]struct{}),
	}
}

// retire stops the session and closes its connection on a goroutine of
// its own: a client may hold a lock of its connection while a send waits
// for a frozen master. Registry.mu is held; it is called once.
func (s *session) retire() {
	close(s.stop)
	s.cancel()
	if c := s.conn; c != nil {
		s.r.wg.Go(func() { c.fail(ErrClosed) })
	}
}

// markDirty tells the writer to look at channel. Registry.mu is held.
func (s *session) markDirty(channel string) {
	s.dirty[channel] = struct{}{}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run dials, serves and redials until the session is retired.
func (s *session) run() {
	defer s.r.wg.Done()
	backoff := minRedial
	for {
		c, err := s.r.dial(s.ctx)
		if err == nil {
			var healthy bool
			healthy, err = s.serve(c)
			if healthy {
				backoff = minRedial
			}
		}
		select {
		case <-s.stop:
			return
		default:
		}
		s.r.mu.Lock()
		s.lastErr = err
		s.r.mu.Unlock()

		t := time.NewTimer(backoff/2 + rand.N(backoff/2+1))
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, maxRedial)
	}
}

// serve runs the writer and the receive loop on c until c fails or the
// session is retired. healthy reports whether the master confirmed
// anything; err is the first error that failed the connection.
func (s *session) serve(conn Conn) (healthy bool, err error) {
	c := &liveConn{Conn: conn}
	s.r.mu.Lock()
	select {
	case <-s.stop:
		s.r.mu.Unlock()
		c.fail(ErrClosed)
		return false, ErrClosed
	default:
	}
	s.conn = c
	for name := range s.chans {
		s.dirty[name] = struct{}{}
	}
	s.r.mu.Unlock()

	connDone := make(chan struct{})
	writerDone := make(chan struct{})
	go s.write(c, connDone, writerDone)
	healthy = s.receive(c)
	close(connDone)
	<-writerDone

	s.r.mu.Lock()
	s.conn = nil
	for name, st := range s.chans {
		if len(st.regs) == 0 {
			delete(s.chans, name)
			continue
		}
		if st.confirmed {
			st.confirmed = false
			st.wake = true
			st.ready = make(chan struct{})
		}
		st.sent, st.inflight = sentNone, 0
	}
	s.r.mu.Unlock()
	return healthy, c.err
}

// receive reads c until it fails, and fails it.
func (s *session) receive(c *liveConn) (healthy bool) {
	for {
		ev, err := c.Receive()
		if err != nil {
			c.fail(err)
			return healthy
		}
		c.heard.Store(true)
		switch ev.Kind {
		case Message:
			s.deliver(ev.Channel)
		case Subscribed, Unsubscribed:
			s.ack(ev.Channel)
			healthy = true
		}
	}
}

// deliver wakes every registration of channel, without blocking.
func (s *session) deliver(channel string) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	if st := s.chans[channel]; st != nil {
		st.wakeAll()
	}
}

func (st *channelState) wakeAll() {
	for reg := range st.regs {
		select {
		case reg.ch <- struct{}{}:
		default:
		}
	}
}

// ack handles the confirmation of a SUBSCRIBE or UNSUBSCRIBE of channel.
func (s *session) ack(channel string) {
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	s.lastErr = nil
	st := s.chans[channel]
	if st == nil || st.inflight == 0 {
		return
	}
	st.inflight--
	if st.inflight > 0 {
		return
	}
	switch {
	case st.sent == sentSubscribe && !st.confirmed:
		st.confirmed = true
		close(st.ready)
		if st.wake {
			st.wake = false
			st.wakeAll()
		}
	case st.sent == sentUnsubscribe && len(st.regs) == 0:
		delete(s.chans, channel)
	}
}

// write sends what the dirty channels need, and the health PINGs, until
// done is closed or a send fails; a failed send or a missed PING fails c.
func (s *session) write(c *liveConn, done <-chan struct{}, exited chan<- struct{}) {
	defer close(exited)
	pinger, _ := c.Conn.(Pinger)
	tick := time.NewTicker(s.r.ping)
	defer tick.Stop()
	pingDue, pinged := false, false
	for {
		subscribed, err := s.sync(c)
		// Only a connection with subscriptions gets a PING: without any,
		// Redis answers a plain +PONG, which is not a pub/sub reply. sync
		// has just sent whatever was due, so the master sees the PING
		// subscribed.
		switch {
		case err != nil:
		case !subscribed || pinger == nil:
			pinged = false
		case pingDue && pinged && !c.heard.Load():
			err = errNoReply
		case pingDue:
			c.heard.Store(false)
			pinged = true
			err = pinger.Ping(s.ctx)
		}
		if err != nil {
			c.fail(err)
			return
		}
		pingDue = false
		select {
		case <-done:
			return
		case <-s.kick:
		case <-tick.C:
			pingDue = true
		}
	}
}

// sync sends SUBSCRIBE for the dirty channels that are wanted and not yet
// subscribed, and UNSUBSCRIBE for those subscribed and no longer wanted. It
// reports whether the connection has subscriptions afterwards.
func (s *session) sync(c *liveConn) (subscribed bool, err error) {
	var sub, unsub []string
	s.r.mu.Lock()
	for name := range s.dirty {
		delete(s.dirty, name)
		st := s.chans[name]
		if st == nil {
			continue
		}
		want := len(st.regs) > 0
		switch {
		case want && st.sent != sentSubscribe:
			st.sent = sentSubscribe
			st.inflight++
			sub = append(sub, name)
		case !want && st.sent == sentSubscribe:
			st.sent = sentUnsubscribe
			st.inflight++
			if st.confirmed {
				st.confirmed = false
				st.ready = make(chan struct{})
			}
			unsub = append(unsub, name)
		}
	}
	subscribed = s.nregs > 0
	s.r.mu.Unlock()

	// UNSUBSCRIBE first: once a SUBSCRIBE sent after it is confirmed, the
	// master has also processed the UNSUBSCRIBE.
	if len(unsub) > 0 {
		if err := c.Unsubscribe(s.ctx, unsub...); err != nil {
			return false, err
		}
	}
	if len(sub) > 0 {
		if err := c.Subscribe(s.ctx, sub...); err != nil {
			return false, err
		}
	}
	return subscribed, nil
}
