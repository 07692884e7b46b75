package pubsub_test

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/quorumlock/quorumlock/pubsub"
)

// master is an in-memory pub/sub master for the Registry's logic: the
// connections dialed to it, what each was sent, and which channels each
// is subscribed to. A frozen master takes commands and answers nothing.
// Real masters are the business of the pool and adapter tests.
type master struct {
	mu       sync.Mutex
	dialErr  error // the next dials fail with it
	frozen   bool
	conns    []*fakeConn
	dialed   chan struct{} // one send per dial, buffered
	commands []string      // "SUBSCRIBE a", "UNSUBSCRIBE a", "PING", in order
}

func newMaster() *master { return &master{dialed: make(chan struct{}, 100)} }

// dial is a pubsub.Config.Dial.
func (m *master) dial(ctx context.Context) (pubsub.Conn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dialErr != nil {
		return nil, m.dialErr
	}
	c := &fakeConn{
		m:      m,
		events: make(chan pubsub.Event, 1000),
		closed: make(chan struct{}),
		broken: make(chan struct{}),
		subs:   make(map[string]bool),
	}
	m.conns = append(m.conns, c)
	m.dialed <- struct{}{}
	return c, nil
}

// setFrozen freezes or resumes the master; a resumed master answers what
// it took while frozen, in order.
func (m *master) setFrozen(frozen bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.frozen = frozen
	if frozen {
		return
	}
	for _, c := range m.conns {
		for _, ans := range c.pending {
			c.answer(ans)
		}
		c.pending = nil
	}
}

func (m *master) setDialErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dialErr = err
}

// publish sends a message on channel to every open connection subscribed
// to it and returns how many it reached.
func (m *master) publish(channel string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		if c.subs[channel] && !c.isClosed() {
			c.events <- pubsub.Event{Kind: pubsub.Message, Channel: channel}
			n++
		}
	}
	return n
}

// open counts the connections not closed.
func (m *master) open() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		if !c.isClosed() {
			n++
		}
	}
	return n
}

// count reports how many commands equal to cmd were sent.
func (m *master) count(cmd string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.commands {
		if c == cmd {
			n++
		}
	}
	return n
}

// breakConns makes every open connection's Receive fail, as a restart of
// the master does.
func (m *master) breakConns() {
	m.mu.Lock()
	conns := slices.Clone(m.conns)
	m.mu.Unlock()
	for _, c := range conns {
		c.breakOnce.Do(func() { close(c.broken) })
	}
}

// fakeConn is one connection to a master.
type fakeConn struct {
	m         *master
	events    chan pubsub.Event
	closeOnce sync.Once
	closed    chan struct{}
	breakOnce sync.Once
	broken    chan struct{}
	subs      map[string]bool // guarded by m.mu
	pending   []pubsub.Event  // answers held by a frozen master; guarded by m.mu
}

var (
	_ pubsub.Conn   = (*fakeConn)(nil)
	_ pubsub.Pinger = (*fakeConn)(nil)
)

func (c *fakeConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// command records cmd and, unless the master is frozen, answers with one
// event per channel (or one Pong).
func (c *fakeConn) command(cmd string, kind pubsub.Kind, channels []string) error {
	c.m.mu.Lock()
	defer c.m.mu.Unlock()
	if c.isClosed() {
		return errors.New("fake: use of a closed connection")
	}
	for _, ch := range channels {
		c.m.commands = append(c.m.commands, cmd+" "+ch)
	}
	if kind == pubsub.Pong {
		c.m.commands = append(c.m.commands, cmd)
	}
	answers := make([]pubsub.Event, 0, len(channels)+1)
	for _, ch := range channels {
		answers = append(answers, pubsub.Event{Kind: kind, Channel: ch})
	}
	if kind == pubsub.Pong {
		answers = append(answers, pubsub.Event{Kind: pubsub.Pong})
	}
	if c.m.frozen {
		c.pending = append(c.pending, answers...)
		return nil
	}
	for _, ans := range answers {
		c.answer(ans)
	}
	return nil
}

// answer applies a command's effect and sends its answer; m.mu is held.
func (c *fakeConn) answer(ev pubsub.Event) {
	switch ev.Kind {
	case pubsub.Subscribed:
		c.subs[ev.Channel] = true
	case pubsub.Unsubscribed:
		delete(c.subs, ev.Channel)
	}
	c.events <- ev
}

func (c *fakeConn) Subscribe(_ context.Context, channels ...string) error {
	return c.command("SUBSCRIBE", pubsub.Subscribed, channels)
}

func (c *fakeConn) Unsubscribe(_ context.Context, channels ...string) error {
	return c.command("UNSUBSCRIBE", pubsub.Unsubscribed, channels)
}

func (c *fakeConn) Ping(context.Context) error { return c.command("PING", pubsub.Pong, nil) }

func (c *fakeConn) Receive() (pubsub.Event, error) {
	select {
	case ev := <-c.events:
		return ev, nil
	case <-c.closed:
		return pubsub.Event{}, errors.New("fake: connection closed")
	case <-c.broken:
		return pubsub.Event{}, errors.New("fake: connection reset by peer")
	}
}

func (c *fakeConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}
