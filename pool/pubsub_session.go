package pool

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/gomodule/redigo/redis"
)

// One session of a notifier (see pubsub.go): from the first registration
// to the last unsubscribe, across any number of connections. One goroutine
// dials, receives and redials (the only caller of Receive), and for each
// connection one writer goroutine sends SUBSCRIBE, UNSUBSCRIBE and the
// health PINGs (the only caller of Send and Flush, so redigo's
// one-reader/one-writer rule holds by construction).

const (
	// pingPeriod is how often the writer PINGs a subscribed connection.
	pingPeriod = 3 * time.Second
	// pongTimeout is how long after a due PING the receiver waits for any
	// reply before it declares the connection dead and redials.
	pongTimeout = 2 * time.Second
	// minRedial and maxRedial bound the jittered, doubling redial backoff.
	minRedial = 50 * time.Millisecond
	maxRedial = 2 * time.Second
)

// session is one run of the subscriber: from the first registration to the
// last unsubscribe, across any number of connections. All fields below the
// first block are guarded by notifier.mu.
type session struct {
	nt     *notifier
	stop   chan struct{}   // closed when the session is retired
	ctx    context.Context // cancelled (by cancel) when the session is retired: ends a dial
	cancel context.CancelFunc
	kick   chan struct{} // buffered 1: the writer has work to do

	conn    redis.Conn               // the live connection, nil while (re)dialing
	chans   map[string]*channelState // channels with registrations or replies due
	dirty   map[string]struct{}      // channels whose wanted state may differ from what was sent
	nregs   int                      // registrations in this session
	lastErr error                    // the last dial or connection error, cleared on a reply
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
	inflight  int           // commands sent for the channel and not yet answered
	confirmed bool          // subscribed on the current connection, as the server confirmed
	ready     chan struct{} // closed when confirmed becomes true; replaced when it turns false
	wake      bool          // wake every registration once the channel is confirmed again
}

func newSession(nt *notifier) *session {
	ctx, cancel := context.WithCancel(context.Background())
	return &session{
		nt:     nt,
		stop:   make(chan struct{}),
		ctx:    ctx,
		cancel: cancel,
		kick:   make(chan struct{}, 1),
		chans:  make(map[string]*channelState),
		dirty:  make(map[string]struct{}),
	}
}

// retire stops the session and returns its connection for the caller to
// close outside the lock. notifier.mu is held; it is called once.
func (s *session) retire() redis.Conn {
	close(s.stop)
	s.cancel()
	return s.conn
}

// markDirty tells the writer to look at channel. notifier.mu is held.
func (s *session) markDirty(channel string) {
	s.dirty[channel] = struct{}{}
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// run dials, serves and redials until the session is retired.
func (s *session) run() {
	defer s.nt.wg.Done()
	backoff := minRedial
	for {
		c, err := s.nt.dial(s.ctx)
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
		s.nt.mu.Lock()
		s.lastErr = err
		s.nt.mu.Unlock()

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
// session is retired. healthy reports whether the server answered at all.
func (s *session) serve(c redis.Conn) (healthy bool, err error) {
	nt := s.nt
	nt.mu.Lock()
	select {
	case <-s.stop:
		nt.mu.Unlock()
		c.Close()
		return false, errNodeClosed
	default:
	}
	s.conn = c
	for name := range s.chans {
		s.dirty[name] = struct{}{}
	}
	nt.mu.Unlock()

	connDone := make(chan struct{})
	writerDone := make(chan struct{})
	go s.write(c, connDone, writerDone)
	healthy, err = s.receive(c)
	c.Close() // ends a write in progress
	close(connDone)
	<-writerDone

	nt.mu.Lock()
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
	nt.mu.Unlock()
	return healthy, err
}

// receive reads c until it fails. Any reply, a PONG included, must arrive
// within pingPeriod+pongTimeout of the previous one.
func (s *session) receive(c redis.Conn) (healthy bool, err error) {
	psc := redis.PubSubConn{Conn: c}
	for {
		switch v := psc.ReceiveWithTimeout(pingPeriod + pongTimeout).(type) {
		case redis.Message:
			s.deliver(v.Channel)
		case redis.Subscription:
			s.ack(v.Channel)
			healthy = true
		case redis.Pong:
		case error:
			return healthy, v
		}
	}
}

// deliver wakes every registration of channel, without blocking.
func (s *session) deliver(channel string) {
	nt := s.nt
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if st := s.chans[channel]; st != nil {
		st.wakeAll()
	}
}

func (st *channelState) wakeAll() {
	for r := range st.regs {
		select {
		case r.ch <- struct{}{}:
		default:
		}
	}
}

// ack handles a subscribe or unsubscribe reply for channel. Replies come in
// the order of the commands, so the channel is confirmed when the answer to
// its latest command arrives and that command was a SUBSCRIBE.
func (s *session) ack(channel string) {
	nt := s.nt
	nt.mu.Lock()
	defer nt.mu.Unlock()
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

// write sends what the dirty channels need, and a PING every pingPeriod,
// until done is closed or a write fails.
func (s *session) write(c redis.Conn, done <-chan struct{}, exited chan<- struct{}) {
	defer close(exited)
	tick := time.NewTicker(pingPeriod)
	defer tick.Stop()
	pingDue := false
	for {
		subscribed, err := s.sync(c)
		// Only a subscribed connection gets a PING: unsubscribed, Redis would
		// answer a plain +PONG, which is not a pub/sub reply. sync has just
		// sent whatever was due, so the server sees the PING subscribed.
		if err == nil && pingDue && subscribed {
			err = redis.PubSubConn{Conn: c}.Ping("")
		}
		if err != nil {
			c.Close()
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
// reports whether the connection is subscribed to any channel afterwards.
func (s *session) sync(c redis.Conn) (subscribed bool, err error) {
	var sub, unsub []any
	nt := s.nt
	nt.mu.Lock()
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
	nt.mu.Unlock()

	// UNSUBSCRIBE first: once a SUBSCRIBE sent with it is confirmed, the
	// server has also processed the UNSUBSCRIBE.
	if len(unsub) > 0 {
		if err := c.Send("UNSUBSCRIBE", unsub...); err != nil {
			return false, err
		}
	}
	if len(sub) > 0 {
		if err := c.Send("SUBSCRIBE", sub...); err != nil {
			return false, err
		}
	}
	if len(sub) > 0 || len(unsub) > 0 {
		if err := c.Flush(); err != nil {
			return false, err
		}
	}
	return subscribed, nil
}
