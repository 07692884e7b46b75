package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/gomodule/redigo/redis"
)

// The pipelined side of a Node (the default; see Config.Pooled): every caller's command
// goes through one shared connection. A writer goroutine takes whatever
// commands are queued, writes them with one Flush (one system call for many
// callers), and hands them, in order, to a reader goroutine that matches the
// replies to them. Redis answers one connection's commands in order, so the
// n-th reply belongs to the n-th command written.
//
// A caller waits for its reply or for its context, whichever comes first. A
// caller that gave up leaves its command in the pipeline; its reply is read
// and dropped, so the connection stays in step. A connection that breaks, or
// whose oldest command gets no reply within Config.StallTimeout (a frozen
// master), is closed: every command on it fails, and the next caller dials a
// new one (see dial.go).
//
// A command that may have reached the master is never sent again: the
// master may have run it and lost only the reply (a crash after the AOF
// fsync, CLIENT KILL, a middlebox reset), and a reentrant release run twice
// hands the lock to another owner. Its caller gets the error: a failed call
// is a failed vote. Only a command that provably never left this process is
// sent on a fresh connection: before the writer writes to a connection on
// which no command is in flight, it checks that the master has not closed
// it (idleCheck; a restart while idle is the common case), and the commands
// it took are then handed back unsent.

// muxQueue bounds the commands waiting for the writer and those written
// and waiting for their replies, per connection: at the bound, callers wait
// (until their context ends) instead of piling up on a stalled master.
const muxQueue = 4096

// errStalled closes a connection whose oldest command got no reply in time.
var errStalled = errors.New("no reply within the stall timeout")

// request is one command in the pipeline. Requests whose caller took the
// reply are recycled; one whose caller gave up is left to the collector,
// since the pipeline may still hold it.
type request struct {
	cmd   string
	args  []any
	reply any
	err   error
	done  chan struct{} // buffered 1: one send when reply and err are set
}

var requests = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

// mux owns the current pipelined connection of a Node.
type mux struct {
	n *Node

	mu     sync.Mutex
	cur    *muxConn // nil until dialed, and after it broke
	closed bool
	wg     sync.WaitGroup
}

// muxConn is one pipelined connection and its two goroutines.
type muxConn struct {
	c           *conn
	queue       chan *request // callers -> writer
	pending     chan *request // writer -> reader, in the order written
	broken      chan struct{} // closed by fail
	outstanding atomic.Int64  // commands written whose reply was not read yet
	once        sync.Once
	err         error // why it broke; set before broken is closed
}

// notSentError is the error of a command that the writer took but never
// wrote, because the connection was found dead first: it may go out on a
// fresh connection.
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// do sends one command through the pipeline. It goes out once at most; it
// is handed to a fresh connection only when it was never written (see the
// top of this file).
func (m *mux) do(ctx context.Context, cmd string, args []any) (any, error) {
	for tries := 0; ; tries++ {
		mc, err := m.conn(ctx)
		if err != nil {
			return nil, err
		}
		reply, err := m.send(ctx, mc, cmd, args)
		var notSent notSentError
		if tries < maxUnsent && errors.As(err, &notSent) && ctx.Err() == nil {
			continue
		}
		return reply, err
	}
}

// maxUnsent bounds how often one command is handed to a fresh connection
// after it found the previous one dead before it was written.
const maxUnsent = 2

// send queues one command on mc and waits for its reply.
func (m *mux) send(ctx context.Context, mc *muxConn, cmd string, args []any) (any, error) {
	r := requests.Get().(*request)
	r.cmd, r.args = cmd, args
	select {
	case mc.queue <- r:
	case <-mc.broken:
		return nil, notSentError{mc.err}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-r.done:
		return r.recycle()
	case <-mc.broken:
		select {
		case <-r.done: // answered before the connection broke
			return r.recycle()
		default:
			return nil, mc.err
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// recycle returns r's result and puts r back for reuse.
func (r *request) recycle() (any, error) {
	reply, err := r.reply, r.err
	*r = request{done: r.done}
	requests.Put(r)
	return reply, err
}

// conn returns the live connection, waiting for a dial (see dial.go) until
// ctx ends.
func (m *mux) conn(ctx context.Context) (*muxConn, error) {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, errNodeClosed
		}
		if mc := m.cur; mc != nil {
			m.mu.Unlock()
			return mc, nil
		}
		a, err := m.n.dialer.attempt()
		m.mu.Unlock()
		if err != nil {
			return nil, err
		}
		if err := a.wait(ctx); err != nil {
			return nil, err
		}
	}
}

// install makes c the live connection and starts its goroutines; it is the
// dialer's land hook.
func (m *mux) install(c *conn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errNodeClosed
	}
	mc := &muxConn{
		c:       c,
		queue:   make(chan *request, muxQueue),
		pending: make(chan *request, muxQueue),
		broken:  make(chan struct{}),
	}
	m.cur = mc
	m.wg.Add(2)
	go m.write(mc)
	go m.read(mc)
	return nil
}

// write batches queued commands into single flushes.
func (m *mux) write(mc *muxConn) {
	defer m.wg.Done()
	for {
		var r *request
		select {
		case r = <-mc.queue:
		case <-mc.broken:
			return
		}
		if mc.outstanding.Load() == 0 {
			if err := mc.c.idle(); err != nil {
				// Nothing was written since the connection went idle:
				// every command on it is unsent.
				err = notSentError{err}
				r.finish(nil, err)
				m.fail(mc, err)
				return
			}
		}
		for {
			if err := mc.c.Send(r.cmd, r.args...); err != nil {
				m.fail(mc, err)
				r.finish(nil, mc.err)
				return
			}
			mc.outstanding.Add(1)
			select {
			case mc.pending <- r:
			case <-mc.broken:
				r.finish(nil, mc.err)
				return
			}
			select {
			case r = <-mc.queue:
				continue
			default:
			}
			break
		}
		if err := mc.c.Flush(); err != nil {
			m.fail(mc, err)
			return
		}
	}
}

// read matches replies to the commands written, in order.
func (m *mux) read(mc *muxConn) {
	defer m.wg.Done()
	for {
		var r *request
		select {
		case r = <-mc.pending:
		case <-mc.broken:
			return
		}
		reply, err := redis.ReceiveWithTimeout(mc.c, m.n.stallTimeout)
		mc.outstanding.Add(-1)
		if _, isReply := err.(redis.Error); err != nil && !isReply {
			if isTimeout(err) {
				err = errStalled
			}
			m.fail(mc, err)
			r.finish(nil, mc.err)
			return
		}
		r.finish(reply, err)
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

func (r *request) finish(reply any, err error) {
	r.reply, r.err = reply, err
	r.done <- struct{}{}
}

// fail marks mc broken (once), closes its connection (which ends a read or
// write in progress) and detaches it from m, so that the next caller dials
// anew. Callers still waiting on mc see broken and return its error; the
// commands left in its channels are dropped with it.
func (m *mux) fail(mc *muxConn, err error) {
	mc.once.Do(func() {
		mc.err = err
		close(mc.broken)
		mc.c.Close()
		m.mu.Lock()
		if m.cur == mc {
			m.cur = nil
		}
		m.mu.Unlock()
	})
}

// close fails the current connection and waits for every goroutine.
func (m *mux) close() {
	m.mu.Lock()
	m.closed = true
	mc := m.cur
	m.mu.Unlock()
	if mc != nil {
		m.fail(mc, errNodeClosed)
	}
	m.wg.Wait()
}

// active reports whether a pipelined connection is open.
func (m *mux) active() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur != nil
}
