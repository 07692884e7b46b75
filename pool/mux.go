package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The pipelined side of a Node (the default; see Config.Pooled): every caller's command
// goes through one shared connection. A writer goroutine takes whatever
// commands are queued, writes them with one Flush (one system call for many
// callers), and hands them, in order, to a reader goroutine that matches the
// replies to them. Redis answers one connection's commands in order, so the
// n-th reply belongs to the n-th command written.
//
// Every command completes by callback: the reader completes each request
// as its reply arrives (a waiting Do caller is woken; an asynchronous
// caller's done function runs on the reader goroutine and must not block).
// Queuing a command never blocks: at muxQueue waiting commands it fails at
// once, and while the connection is being dialed it waits in a list that
// the new connection takes first (or the dial's one watcher goroutine
// fails), never on the caller's goroutine or the reader's. Commands go out
// in the order they were queued, except after a connection broke: its
// unwritten commands go to the next one after those queued meanwhile. A caller
// that gave up leaves its command in the pipeline; its reply is read and
// dropped, so the connection stays in step. A connection that breaks, or
// whose oldest command gets no reply within the stall timeout (a frozen
// master), is closed: every command on it completes with an error, and the
// next caller dials a new one (see dial.go). So every command completes,
// within the stall timeout of its being written, or at Node.Close.
//
// A command that may have reached the master is never sent again: the
// master may have run it and lost only the reply (a crash after the AOF
// fsync, CLIENT KILL, a middlebox reset), and a reentrant release run twice
// hands the lock to another owner. Its caller gets the error: a failed call
// is a failed vote. Only a command that provably never left this process is
// sent on a fresh connection (resend): before the writer writes to a
// connection on which no command is in flight, it checks that the master
// has not closed it (idleChecker; a restart while idle is the common case),
// and the commands it took are then handed back unsent; so are the
// commands still queued, unwritten, on a connection that broke. An EVALSHA
// answered NOSCRIPT ran nothing, and goes again as EVAL.

// muxQueue bounds the commands waiting for the writer and those written
// and waiting for their replies, per connection: beyond the bound, a
// command fails at once with errBusy, unsent, instead of piling up on a
// stalled master.
const muxQueue = 4096

// errStalled closes a connection whose oldest command got no reply in time.
var errStalled = errors.New("no reply within the stall timeout")

// errBusy is the error of a command that found muxQueue commands waiting.
var errBusy = errors.New("too many commands waiting for the connection")

// request is one command in the pipeline. Requests are recycled once their
// caller took the reply; one whose waiting caller gave up is left to the
// collector, since the pipeline may still hold it.
type request struct {
	cmd   string
	args  []any
	src   string          // with EVALSHA: the script, sent as EVAL after NOSCRIPT
	ctx   context.Context // bounds waiting for a dial, and any resend
	tries int             // resends so far
	// done, if set, completes the request (an asynchronous call);
	// otherwise reply and err are set and ch gets one send.
	done  Completion
	reply any
	err   error
	ch    chan struct{} // buffered 1
}

var requests = sync.Pool{New: func() any { return &request{ch: make(chan struct{}, 1)} }}

func newRequest(ctx context.Context, cmd string, args []any, src string, done Completion) *request {
	r := requests.Get().(*request)
	r.ctx, r.cmd, r.args, r.src, r.done = ctx, cmd, args, src, done
	return r
}

// mux owns the current pipelined connection of a Node. It knows the Node
// only through what it was given.
type mux struct {
	dial  func() (*dialAttempt, error) // starts a dial, or joins the one in progress
	stall time.Duration                // StallTimeout
	wrap  func(error) error            // an asynchronous call's error, as the Node reports it

	cur atomic.Pointer[muxConn] // nil until dialed, and after it broke; set under mu

	mu      sync.Mutex
	dialing bool       // a watch runs
	waiting []*request // for the dial that watch waits for, in order
	closed  bool
	wg      sync.WaitGroup // the connections' goroutines
}

// muxConn is one pipelined connection and its two goroutines.
type muxConn struct {
	c           *conn
	queue       chan *request // callers -> writer
	pending     chan *request // writer -> reader, in the order written
	broken      chan struct{} // closed by fail
	outstanding atomic.Int64  // commands written whose reply was not read yet
	exited      atomic.Int32  // of the two goroutines; the second drains

	mu     sync.RWMutex // enqueue holds it shared; fail exclusively
	failed bool
	err    error // why it broke; set before broken is closed
}

// notSentError is the error of a command that the writer took but never
// wrote, because the connection was found dead first: it may go out on a
// fresh connection.
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// do sends one command through the pipeline and waits for its reply or for
// ctx. It goes out once at most (see resend); an EVALSHA with src falls
// back to EVAL.
func (m *mux) do(ctx context.Context, cmd string, args []any, src string) (any, error) {
	r := newRequest(ctx, cmd, args, src, nil)
	m.submit(r)
	select {
	case <-r.ch:
		return r.recycle()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// start sends one command through the pipeline and returns at once;
// done.Complete runs once with the reply, on the goroutine that completes the command
// (the reader's, the writer's, a dial's, or the caller's before start
// returns). done must not block.
func (m *mux) start(ctx context.Context, cmd string, args []any, src string, done Completion) {
	m.submit(newRequest(ctx, cmd, args, src, done))
}

// maxUnsent bounds how often one command is handed to a fresh connection
// after it found the previous one dead before it was written.
const maxUnsent = 2

// submit queues r on the live connection, without blocking. With none,
// r waits in m.waiting for the dial that submit starts (or joins): install
// queues the waiting commands on the new connection before any later one,
// so commands go out in the order they were submitted, and one goroutine
// per dial, not per command, fails them if the dial fails (watch).
func (m *mux) submit(r *request) {
	if mc := m.cur.Load(); mc != nil { // the common case: no lock
		if err := mc.enqueue(r); err != nil {
			m.finish(r, nil, err)
		}
		return
	}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		m.finish(r, nil, errNodeClosed)
		return
	}
	if mc := m.cur.Load(); mc != nil {
		m.mu.Unlock()
		if err := mc.enqueue(r); err != nil {
			m.finish(r, nil, err)
		}
		return
	}
	if !m.dialing {
		a, err := m.dial()
		if err != nil {
			m.mu.Unlock()
			m.finish(r, nil, err)
			return
		}
		m.dialing = true
		go m.watch(a)
	}
	m.waiting = append(m.waiting, r)
	m.mu.Unlock()
}

// watch waits for the dial a, then fails the commands still waiting with
// its error, or, when it succeeded (install took those waiting then),
// submits those that came while its connection broke again. A command
// whose context ended while it waited fails unsent.
func (m *mux) watch(a *dialAttempt) {
	<-a.done
	m.mu.Lock()
	waiting := m.waiting
	m.waiting, m.dialing = nil, false
	m.mu.Unlock()
	for i, r := range waiting {
		waiting[i] = nil
		switch err := r.ctx.Err(); {
		case a.err != nil:
			m.finish(r, nil, a.err)
		case err != nil:
			m.finish(r, nil, err)
		default:
			m.submit(r)
		}
	}
}

// enqueue hands r to the writer, or reports why not: the connection broke
// (r is unsent) or the queue is full.
func (mc *muxConn) enqueue(r *request) error {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	if mc.failed {
		return notSentError{mc.err}
	}
	select {
	case mc.queue <- r:
		return nil
	default:
		return errBusy
	}
}

// finish completes r with reply and err, unless r goes out again: an
// EVALSHA the master did not know as EVAL, or an unsent command on a
// fresh connection (resend).
func (m *mux) finish(r *request, reply any, err error) {
	if r.src != "" && isNoScript(err) {
		// NOSCRIPT: the master ran nothing; send the source.
		withSrc := make([]any, len(r.args))
		withSrc[0] = r.src
		copy(withSrc[1:], r.args[1:])
		r.cmd, r.args, r.src = "EVAL", withSrc, ""
		m.submit(r)
		return
	}
	if m.resend(r, err) {
		return
	}
	if r.done == nil {
		r.reply, r.err = reply, err
		r.ch <- struct{}{}
		return
	}
	done := r.done
	*r = request{ch: r.ch}
	requests.Put(r)
	done.Complete(reply, m.wrap(err))
}

// resend hands r to a fresh connection when it provably never left this
// process (see the top of this file), and reports whether it did.
func (m *mux) resend(r *request, err error) bool {
	if err == nil {
		return false
	}
	ctx, tries := r.ctx, r.tries
	var notSent notSentError
	if tries < maxUnsent && errors.As(err, &notSent) && ctx.Err() == nil {
		r.tries++
		m.submit(r)
		return true
	}
	return false
}

// recycle returns a waited-for r's result and puts r back for reuse.
func (r *request) recycle() (any, error) {
	reply, err := r.reply, r.err
	*r = request{ch: r.ch}
	requests.Put(r)
	return reply, err
}

// install makes c the live connection and starts its goroutines; it is the
// dialer's land hook. The commands waiting for the dial go first, in
// order; one whose context ended fails unsent.
func (m *mux) install(c *conn) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return errNodeClosed
	}
	mc := &muxConn{
		c:       c,
		queue:   make(chan *request, muxQueue),
		pending: make(chan *request, muxQueue),
		broken:  make(chan struct{}),
	}
	type failed struct {
		r   *request
		err error
	}
	var fails []failed
	for _, r := range m.waiting {
		if err := r.ctx.Err(); err != nil {
			fails = append(fails, failed{r, err})
			continue
		}
		select {
		case mc.queue <- r:
		default:
			fails = append(fails, failed{r, errBusy})
		}
	}
	m.waiting = nil
	m.cur.Store(mc)
	m.wg.Add(2)
	go m.write(mc)
	go m.read(mc)
	m.mu.Unlock()
	for _, f := range fails {
		m.finish(f.r, nil, f.err)
	}
	return nil
}

// write batches queued commands into single flushes.
func (m *mux) write(mc *muxConn) {
	defer m.exit(mc)
	for {
		var r *request
		select {
		case r = <-mc.queue:
		case <-mc.broken:
			return
		}
		if mc.outstanding.Load() == 0 {
			if err := mc.c.checkIdle(); err != nil {
				// Nothing was written since the connection went idle:
				// every command on it is unsent.
				err = notSentError{err}
				m.fail(mc, err)
				m.finish(r, nil, err)
				return
			}
		}
		for {
			if err := mc.c.Send(r.cmd, r.args...); err != nil {
				m.fail(mc, err)
				m.finish(r, nil, mc.err)
				return
			}
			mc.outstanding.Add(1)
			select {
			case mc.pending <- r:
			case <-mc.broken:
				m.finish(r, nil, mc.err)
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
	defer m.exit(mc)
	for {
		var r *request
		select {
		case r = <-mc.pending:
		case <-mc.broken:
			return
		}
		reply, err := redis.ReceiveWithTimeout(mc.c, m.stall)
		mc.outstanding.Add(-1)
		if _, isReply := err.(redis.Error); err != nil && !isReply {
			if isTimeout(err) {
				err = errStalled
			}
			m.fail(mc, err)
			m.finish(r, nil, mc.err)
			return
		}
		m.finish(r, reply, err)
	}
}

// exit ends one of mc's goroutines. The second to exit, when nothing can
// be queued on mc any more, completes the commands left in its channels:
// those still queued were never written (they may go out on a fresh
// connection), those written get mc's error.
func (m *mux) exit(mc *muxConn) {
	defer m.wg.Done()
	if mc.exited.Add(1) < 2 {
		return
	}
	for {
		select {
		case r := <-mc.pending:
			m.finish(r, nil, mc.err)
		case r := <-mc.queue:
			m.finish(r, nil, notSentError{mc.err})
		default:
			return
		}
	}
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// fail marks mc broken (once), closes its connection (which ends a read or
// write in progress) and detaches it from m, so that the next caller dials
// anew. The commands left on mc are completed when its goroutines exit.
func (m *mux) fail(mc *muxConn, err error) {
	mc.mu.Lock()
	if mc.failed {
		mc.mu.Unlock()
		return
	}
	mc.failed, mc.err = true, err
	mc.mu.Unlock()
	close(mc.broken)
	mc.c.Close()
	m.mu.Lock()
	m.cur.CompareAndSwap(mc, nil)
	m.mu.Unlock()
}

// close fails the current connection and waits for its goroutines, which
// complete every command left on it.
func (m *mux) close() {
	m.mu.Lock()
	m.closed = true
	mc := m.cur.Load()
	m.mu.Unlock()
	if mc != nil {
		m.fail(mc, errNodeClosed)
	}
	m.wg.Wait()
}

// active reports whether a pipelined connection is open.
func (m *mux) active() bool { return m.cur.Load() != nil }
