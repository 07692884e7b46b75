package pool

import (
	"sync"
	"sync/atomic"
	"time"
)

// The pipelined side of a Node (the default; see Config.Pooled): one
// connection, a pipe (pipe.go), at a time. Its pipe is never nil: with no
// connection up it is the dead pipe, on which every command fails unsent,
// and the caller then puts it in line for the next connection and starts
// a dial if none runs (one at a time, dial.go). The new connection takes
// the commands in line first, in order; a failed dial fails them. A pipe
// that fails detaches itself, and the next caller dials anew.

// mux owns a Node's pipelined connection. It knows the Node only through
// what it was given.
type mux struct {
	dialer *dialer           // starts a dial; its land hook is landed
	stall  time.Duration     // StallTimeout
	wrap   func(error) error // an asynchronous call's error, as the Node reports it
	dead   *pipe             // no connection (deadPipe)

	cur atomic.Pointer[pipe] // never nil

	mu      sync.Mutex
	dialing bool       // a dial runs
	waiting []*request // in line for the connection it makes, in order
	closed  bool
	wg      sync.WaitGroup // the pipes' goroutines
}

func newMux(d *dialer, stall time.Duration, wrap func(error) error) *mux {
	m := &mux{dialer: d, stall: stall, wrap: wrap, dead: deadPipe()}
	m.cur.Store(m.dead)
	d.land = m.landed
	return m
}

// submit puts r on the live connection, or in line for the next one; it
// never blocks.
func (m *mux) submit(r *request) {
	for {
		p := m.cur.Load()
		err := p.submit(r)
		switch _, unsent := err.(notSentError); {
		case err == nil:
			return
		case !unsent: // errBusy
			m.finish(r, nil, err)
			return
		case m.wait(p, r):
			return
		}
		// A new connection came up since p was loaded: r goes there.
	}
}

// wait puts r in line for the connection that replaces p, the dead pipe
// or a failed one, and starts a dial if none runs; it reports false when
// p was replaced already.
func (m *mux) wait(p *pipe, r *request) bool {
	m.mu.Lock()
	var err error
	switch {
	case m.closed:
		err = errNodeClosed
	case m.cur.Load() != p:
		m.mu.Unlock()
		return false
	case !m.dialing:
		if err = m.dialer.start(); err == nil {
			m.dialing = true
		}
	}
	if err == nil {
		m.waiting = append(m.waiting, r)
	}
	m.mu.Unlock()
	if err != nil {
		m.finish(r, nil, err)
	}
	return true
}

// landed is the dialer's land hook: it makes c, when the dial succeeded,
// the live connection, which writes the commands in line first, in order,
// and otherwise fails them with err. A command whose context ended while
// it waited fails unsent.
func (m *mux) landed(c *conn, err error) {
	m.mu.Lock()
	waiting := m.waiting
	m.waiting, m.dialing = nil, false
	if err == nil && m.closed {
		c.Close()
		err = errNodeClosed
	}
	if err != nil {
		m.mu.Unlock()
		for _, r := range waiting {
			m.finish(r, nil, err)
		}
		return
	}
	queued := waiting[:0]
	var late []*request
	for _, r := range waiting {
		if r.ended() == nil && len(queued) < muxQueue {
			queued = append(queued, r)
		} else {
			late = append(late, r)
		}
	}
	m.cur.Store(newPipe(c, m.stall, queued, m.finish, m.detach, &m.wg))
	m.mu.Unlock()
	for _, r := range late {
		err := r.ended()
		if err == nil {
			err = errBusy
		}
		m.finish(r, nil, err)
	}
}

// detach is told by p that it failed: the next caller dials anew.
func (m *mux) detach(p *pipe) { m.cur.CompareAndSwap(p, m.dead) }

// close fails the live connection and waits for its goroutines; every
// command on it completes with an error, and every later one fails.
func (m *mux) close() {
	m.mu.Lock()
	m.closed = true
	p := m.cur.Load()
	m.mu.Unlock()
	if p != m.dead {
		p.fail(errNodeClosed)
	}
	m.wg.Wait()
}

// active reports whether a pipelined connection is up.
func (m *mux) active() bool { return m.cur.Load() != m.dead }
