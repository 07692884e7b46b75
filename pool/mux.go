package pool

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/interleave"
	"github.com/quorumlock/quorumlock/nodeutil"
)

// The pipelined side of a Node (the default; see Config.Pooled): every
// caller's command goes through one shared connection. Commands are queued;
// whoever queues a command while nobody is writing writes what is queued
// with one Flush (flat combining: one system call for many callers, and no
// wake-up of another goroutine; on a busy connection it first yields once,
// so that the callers about to queue join the write), as long as few bytes are in flight
// (directBytes: they fit in the sockets' buffers, so the write cannot
// block, even on a frozen master); past that, the connection's writer
// goroutine takes over the writing. The commands written go, in order, to
// a reader goroutine that matches the replies to them; a command written
// alone on an idle connection may instead be read by its own caller (a solo
// read, solo.go), in turn with the reader. Redis answers one connection's
// commands in order, so the n-th reply belongs to the n-th command written.
//
// Every command completes by callback: the reader completes each request
// as its reply arrives (a waiting Do caller is woken; an asynchronous
// caller's done function runs on the reader goroutine and must not block;
// a command it queues in turn is written at most directBytes in flight, or
// left to the writer goroutine). Queuing a command never blocks: at
// muxQueue waiting commands it fails at once, and while the connection is
// being dialed it waits in a list that the new connection takes first (or
// the dial's one watcher goroutine fails), never on the caller's goroutine
// or the reader's. Commands go out
// in the order they were queued, except after a connection broke: its
// unwritten commands go to the next one after those queued meanwhile. A caller
// that gave up leaves its command in the pipeline; its reply is read and
// dropped, so the connection stays in step. A connection that breaks, or
// whose oldest command gets no reply within the stall timeout (a frozen
// master), is closed: every command on it completes with an error, and the
// next caller dials a new one (see dial.go). So every command completes,
// within the stall timeout of its being written (plus, for a command whose
// caller read it solo and gave up, that caller's wait), or at Node.Close.
//
// A command that may have reached the master is never sent again: the
// master may have run it and lost only the reply (a crash after the AOF
// fsync, CLIENT KILL, a middlebox reset), and a reentrant release run twice
// hands the lock to another owner. Its caller gets the error: a failed call
// is a failed vote. Only a command that provably never left this process is
// sent on a fresh connection (resend): before the writer writes to a
// connection on which no command is in flight and that has not answered
// for quietBeforeCheck, it checks that the master has not closed it
// (idleChecker; a restart while idle is the common case), and the commands
// it took are then handed back unsent; so are the commands still queued,
// unwritten, on a connection that broke. An EVALSHA answered NOSCRIPT ran
// nothing, and goes again as EVAL, also when its caller gave up.

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
	cmd  string
	args []any
	src  string          // with EVALSHA: the script, sent as EVAL after NOSCRIPT
	ctx  context.Context // bounds waiting for a dial, and any resend
	// fallback: the EVAL after a NOSCRIPT, which goes out whatever ctx
	// does (see finish); set before it is submitted again.
	fallback bool
	tries    int   // resends so far
	size     int64 // about its bytes on the wire (see sizeOf)
	// done, if set, completes the request (an asynchronous call);
	// otherwise reply and err are set and ch gets one send.
	done  Completion
	reply any
	err   error
	ch    chan struct{} // buffered 1
	// solo is the connection on which the caller reads r's reply itself
	// (solo.go).
	solo *muxConn
}

var requests = &sync.Pool{New: func() any { return &request{ch: make(chan struct{}, 1)} }}

func newRequest(ctx context.Context, cmd string, args []any, src string, done Completion) *request {
	r := requests.Get().(*request)
	r.ctx, r.cmd, r.args, r.src, r.done = ctx, cmd, args, src, done
	r.size = sizeOf(cmd, args)
	return r
}

// sizeOf is about the bytes of a command on the wire: its strings and byte
// slices, and a little for everything else and the framing.
func sizeOf(cmd string, args []any) int64 {
	n := int64(len(cmd)) + 16
	for _, a := range args {
		switch a := a.(type) {
		case string:
			n += int64(len(a)) + 16
		case []byte:
			n += int64(len(a)) + 16
		default:
			n += 32
		}
	}
	return n
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
	pending     chan *request // writer -> reader, in the order written
	token       chan struct{} // buffered 1, full when free: who holds it reads replies
	handback    chan *request // buffered 1: a solo read given up (solo.go), read first
	interrupted chan struct{} // buffered 1: a solo read's interrupt ran (solo.go)
	interrupt   func()        // mc.interruptWait, made once
	broken      chan struct{} // closed by fail
	kick        chan struct{} // buffered 1: the writer goroutine takes over writing
	outstanding atomic.Int64  // commands written whose reply was not read yet
	inflight    atomic.Int64  // their sizes (see size)
	answered    atomic.Int64  // when its last reply was read (sinceStart), 0 before
	scripts     scriptsSent   // the writer's (scriptsent.go)
	refs        atomic.Int32  // its goroutines and callers writing on it; the last drains

	mu      sync.Mutex
	failed  bool
	err     error      // why it broke; set before broken is closed
	queue   []*request // queued, not yet taken by a writer
	spare   []*request // a taken batch's slice, for reuse
	writing bool       // a goroutine writes (a caller's or the writer goroutine)
}

// directBytes bounds the bytes in flight on a connection (written, reply
// not read) up to which a caller writes queued commands itself instead of
// waking the writer goroutine: so few fit in the sockets' buffers, so such
// a write never blocks the caller, even on a frozen master.
const directBytes = 16 << 10

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
	if err := ctx.Err(); err != nil {
		return nil, err // never sent: a call whose context ended sends nothing
	}
	return m.await(newRequest(ctx, cmd, args, src, nil))
}

// await sends r, a waiting caller's request, and waits for its reply or
// for r.ctx.
func (m *mux) await(r *request) (any, error) {
	m.submit(r, true)
	if mc := r.solo; mc != nil {
		m.readSolo(mc, r) // completes r, or hands it back when ctx ends
	}
	select {
	case <-r.ch:
		return r.recycle()
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
}

// start sends one command through the pipeline and returns at once;
// done.Complete runs once with the reply, on the goroutine that completes the command
// (the reader's, the writer's, a dial's, or the caller's before start
// returns). done must not block.
func (m *mux) start(ctx context.Context, cmd string, args []any, src string, done Completion) {
	if err := ctx.Err(); err != nil {
		done.Complete(nil, m.wrap(err)) // never sent
		return
	}
	m.submit(newRequest(ctx, cmd, args, src, done), true)
}

// maxUnsent bounds how often one command is handed to a fresh connection
// after it found the previous one dead before it was written.
const maxUnsent = 2

// submit queues r on the live connection, without blocking; own says
// that r is the command of the caller of submit (see writeBatch). With none,
// r waits in m.waiting for the dial that submit starts (or joins): install
// queues the waiting commands on the new connection before any later one,
// so commands go out in the order they were submitted, and one goroutine
// per dial, not per command, fails them if the dial fails (watch).
func (m *mux) submit(r *request, own bool) {
	if mc := m.cur.Load(); mc != nil { // the common case: no lock
		if err := m.enqueue(mc, r, own); err != nil {
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
		if err := m.enqueue(mc, r, own); err != nil {
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
		switch err := r.ended(); {
		case a.err != nil:
			m.finish(r, nil, a.err)
		case err != nil:
			m.finish(r, nil, err)
		default:
			m.submit(r, false)
		}
	}
}

// enqueue queues r on mc, or reports why not: the connection broke (r is
// unsent) or the queue is full. If no goroutine is writing on mc, the
// caller writes the queue itself while few commands are in flight (flat
// combining: one system call for what concurrent callers queued, and no
// wake-up of the writer goroutine), and otherwise hands the writing to the
// writer goroutine; it never blocks on the connection either way. With
// own, r is the caller's command, which it may read the reply of itself.
func (m *mux) enqueue(mc *muxConn, r *request, own bool) error {
	mc.mu.Lock()
	if mc.failed {
		err := notSentError{mc.err}
		mc.mu.Unlock()
		return err
	}
	if len(mc.queue) >= muxQueue {
		mc.mu.Unlock()
		return errBusy
	}
	mc.queue = append(mc.queue, r)
	if mc.writing {
		mc.mu.Unlock()
		return nil
	}
	mc.writing = true
	mc.refs.Add(1) // mc's commands are drained only once this write ends
	mc.mu.Unlock()
	var self *request
	if own {
		self = r
	}
	if mc.outstanding.Load() > 0 {
		// The connection is busy, so other callers are about to queue
		// commands: let them run first, and write theirs with this one.
		// Fewer, larger writes cost the client and the master less per
		// command (twice the throughput at N=5 with 64 goroutines on two
		// CPUs); an idle connection, the uncontended case, writes at once.
		runtime.Gosched()
	}
	m.flush(mc, true, self)
	m.release(mc)
	return nil
}

// flush writes what is queued on mc, batch after batch, until the queue is
// empty. Its caller holds mc.writing and flush gives it up. On a caller's
// goroutine (direct; self, if not nil, is that caller's own command), a
// batch takes the queued commands only while the bytes in flight stay
// within directBytes; past that, flush hands the writing to the writer
// goroutine (one kick per hand-over: kick never blocks), which may wait for
// room.
//
// self is the caller's own only in the first batch, the one it is in
// (it was queued last, on a connection nobody was writing): once written,
// an asynchronous call may complete, and its request go to the next
// caller's command, which a later batch must not take for the caller's
// own. A Do caller's command taken for it would be read solo by nobody
// (the Do caller looked for a solo read when its submit returned), and
// the connection's reader would wait for the read token for ever.
func (m *mux) flush(mc *muxConn, direct bool, self *request) {
	for {
		mc.mu.Lock()
		if mc.failed || len(mc.queue) == 0 {
			mc.writing = false // a failed mc's queue is drained by the last release
			mc.mu.Unlock()
			return
		}
		var batch []*request
		if direct {
			room, n := directBytes-mc.inflight.Load(), 0
			for n < len(mc.queue) && room >= mc.queue[n].size {
				room -= mc.queue[n].size
				n++
			}
			if n == 0 {
				mc.mu.Unlock()
				mc.kick <- struct{}{}
				return
			}
			batch = append(mc.spare, mc.queue[:n]...)
			mc.spare = nil
			rest := copy(mc.queue, mc.queue[n:])
			clear(mc.queue[rest:])
			mc.queue = mc.queue[:rest]
		} else {
			batch = mc.queue
			mc.queue, mc.spare = mc.spare, nil
		}
		mc.mu.Unlock()
		ok := m.writeBatch(mc, batch, self)
		if self != nil {
			// An interleaving point (internal/interleave): nothing runs
			// here but in the chaos harness, which stretches it as a
			// goroutine descheduled right after its own write would be;
			// its request may complete and be recycled meanwhile, which
			// is why self holds only for this first batch.
			interleave.AfterOwnWrite()
		}
		self = nil
		clear(batch)
		mc.mu.Lock()
		mc.spare = batch[:0]
		mc.mu.Unlock()
		if !ok {
			mc.mu.Lock()
			mc.writing = false
			mc.mu.Unlock()
			return
		}
	}
}

// quietBeforeCheck is how long a connection on which no command is in
// flight must have gone without a reply before the writer checks it
// (idleChecker). The check is a system call per write on an idle
// connection: 9 of the 73 that an uncontended lock+unlock at N=5 cost the
// client and the masters together, measured with perf stat, and about 4%
// of the cycle's time on two CPUs. A connection that answered a
// moment ago is all but certainly open; if the master closed it since all
// the same, the command written to it fails as one whose reply was lost (a
// failed vote, never sent again), as when the master closes it just after
// the write. A master's idle timeout is 1s at least, and a restart takes
// far longer than this. (The check also finds bytes that nobody asked for;
// Redis sends none on a RESP2 command connection.)
const quietBeforeCheck = time.Millisecond

// processStart is what sinceStart counts from.
var processStart = time.Now()

// sinceStart is the monotonic time since processStart, never 0.
func sinceStart() int64 { return int64(time.Since(processStart)) | 1 }

// quiet reports whether mc has not answered for quietBeforeCheck: it
// never answered, or its last reply was read that long ago.
func (mc *muxConn) quiet() bool {
	at := mc.answered.Load()
	return at == 0 || sinceStart()-at >= int64(quietBeforeCheck)
}

// writeBatch writes batch with one flush and hands its commands, in order,
// to the reader. It reports false when mc broke; each command of batch is
// then either completed or with the reader. A batch of self alone on an
// idle connection may be read by its caller instead (solo.go).
func (m *mux) writeBatch(mc *muxConn, batch []*request, self *request) bool {
	idle := mc.outstanding.Load() == 0
	if idle && mc.quiet() {
		if err := mc.c.checkIdle(); err != nil {
			// Nothing was written since the connection went idle: the
			// batch is unsent.
			err = notSentError{err}
			m.fail(mc, err)
			for _, r := range batch {
				m.finish(r, nil, err)
			}
			return false
		}
	}
	solo := idle && self != nil && len(batch) == 1 && batch[0] == self && mc.mayReadSolo()
	for i, r := range batch {
		cmd, args := mc.scripts.wire(r)
		if err := mc.c.Send(cmd, args...); err != nil {
			m.fail(mc, err)
			if solo {
				mc.token <- struct{}{}
			}
			for _, r := range batch[i:] {
				m.finish(r, nil, mc.err)
			}
			return false
		}
		mc.outstanding.Add(1)
		mc.inflight.Add(r.size)
		if solo {
			break // its caller reads it, or hands it to the reader below
		}
		if !m.toReader(mc, r) {
			for _, r := range batch[i+1:] {
				m.finish(r, nil, mc.err)
			}
			return false
		}
	}
	if err := mc.c.Flush(); err != nil {
		m.fail(mc, err)
		if solo {
			mc.token <- struct{}{}
			m.finish(self, nil, mc.err) // it may have gone out: not again
		}
		return false
	}
	if solo && !m.goSolo(mc, self) {
		// Nobody reads self solo: the reader will. The token goes back
		// first (self is all that is in flight, and no other write can
		// start before this one returns), so that the reader, once it
		// has self in hand, finds the token and is not woken twice.
		mc.token <- struct{}{}
		return m.toReader(mc, self)
	}
	return true
}

// toReader hands r, written on mc, to mc's reader, or completes it with
// mc's error when mc broke, and then reports false.
func (m *mux) toReader(mc *muxConn, r *request) bool {
	select {
	case mc.pending <- r:
		return true
	case <-mc.broken:
		m.finish(r, nil, mc.err)
		return false
	}
}

// finish completes r with reply and err, unless r goes out again: an
// EVALSHA the master did not know as EVAL (see below), or an unsent
// command on a fresh connection (resend).
func (m *mux) finish(r *request, reply any, err error) {
	if r.src != "" && isNoScript(err) {
		// NOSCRIPT: the master ran nothing; send the source, also when
		// the caller gave up: every script redlock sends may land late
		// (a release must), and the EVAL must go out even then. It is no
		// resend, and not bound by the caller's context any more.
		r.cmd, r.args, r.src = "EVAL", nodeutil.EvalArgs(r.src, r.args), ""
		r.size = sizeOf(r.cmd, r.args)
		r.fallback = true
		m.submit(r, false)
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
	var notSent notSentError
	if r.tries < maxUnsent && errors.As(err, &notSent) && r.ended() == nil {
		r.tries++
		m.submit(r, false)
		return true
	}
	return false
}

// ended is r's context's error, while r's context bounds its sending: not
// for the EVAL after a NOSCRIPT, which goes out whatever the caller does.
func (r *request) ended() error {
	if r.fallback {
		return nil
	}
	return r.ctx.Err()
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
		c:           c,
		pending:     make(chan *request, muxQueue),
		token:       make(chan struct{}, 1),
		handback:    make(chan *request, 1),
		interrupted: make(chan struct{}, 1),
		broken:      make(chan struct{}),
		kick:        make(chan struct{}, 1),
	}
	mc.token <- struct{}{}
	mc.interrupt = mc.interruptWait
	mc.refs.Store(2)
	type failed struct {
		r   *request
		err error
	}
	var fails []failed
	for _, r := range m.waiting {
		switch err := r.ended(); {
		case err != nil:
			fails = append(fails, failed{r, err})
		case len(mc.queue) >= muxQueue:
			fails = append(fails, failed{r, errBusy})
		default:
			mc.queue = append(mc.queue, r)
		}
	}
	m.waiting = nil
	if len(mc.queue) > 0 { // the writer goroutine writes them, first
		mc.writing = true
		mc.kick <- struct{}{}
	}
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

// write writes for the callers that handed the writing over: while many
// commands are in flight (a slow or frozen master), and for the commands
// queued during a dial.
func (m *mux) write(mc *muxConn) {
	defer m.exit(mc)
	for {
		select {
		case <-mc.kick:
		case <-mc.broken:
			return
		}
		m.flush(mc, false, nil)
	}
}

// read matches replies to the commands written, in order. It reads while
// it holds mc.token, which a caller reading its own reply holds instead
// (solo.go); a command such a caller handed back was written before any
// in pending, so its reply is read first.
func (m *mux) read(mc *muxConn) {
	defer m.exit(mc)
	var next *request // taken from pending, behind a command handed back
	for {
		r := next
		next = nil
		if r == nil {
			select {
			case r = <-mc.handback:
			case r = <-mc.pending:
			case <-mc.broken:
				return
			}
		}
		select {
		case <-mc.token:
		case <-mc.broken:
			m.finish(r, nil, mc.err)
			return
		}
		select {
		case h := <-mc.handback:
			r, next = h, r
		default:
		}
		reply, ok, err := m.receive(mc, r)
		mc.token <- struct{}{}
		m.finish(r, reply, err)
		if !ok {
			if next != nil {
				m.finish(next, nil, mc.err)
			}
			return
		}
	}
}

// receive reads r's reply on mc, whose token its caller holds. A
// transport error or no reply within the stall timeout fails mc: r then
// gets mc's error, and receive reports false.
func (m *mux) receive(mc *muxConn, r *request) (reply any, ok bool, err error) {
	reply, err = redis.ReceiveWithTimeout(mc.c, m.stall)
	mc.settled(r)
	if _, isReply := err.(redis.Error); err != nil && !isReply {
		return nil, false, m.failRead(mc, err)
	}
	return reply, true, err
}

// settled takes r, whose reply was read or lost, off mc's counts of what
// is in flight.
func (mc *muxConn) settled(r *request) {
	mc.answered.Store(sinceStart())
	mc.outstanding.Add(-1)
	mc.inflight.Add(-r.size)
}

// failRead fails mc for err, a read's transport error or timeout (no reply
// within the stall timeout), and returns the error of mc's commands.
func (m *mux) failRead(mc *muxConn, err error) error {
	if isTimeout(err) {
		err = errStalled
	}
	m.fail(mc, err)
	return mc.err
}

// exit ends one of mc's goroutines.
func (m *mux) exit(mc *muxConn) {
	defer m.wg.Done()
	m.release(mc)
}

// release drops one reference to mc (its two goroutines, and a caller
// writing on it). The last, when nothing can be queued on mc any more and
// nobody writes on it, completes the commands left on it: those still
// queued were never written (they may go out on a fresh connection), those
// written get mc's error.
func (m *mux) release(mc *muxConn) {
	if mc.refs.Add(-1) > 0 {
		return
	}
	mc.mu.Lock()
	queued := mc.queue
	mc.queue = nil
	mc.mu.Unlock()
	for {
		select {
		case r := <-mc.handback:
			m.finish(r, nil, mc.err)
			continue
		case r := <-mc.pending:
			m.finish(r, nil, mc.err)
			continue
		default:
		}
		break
	}
	for _, r := range queued {
		m.finish(r, nil, notSentError{mc.err})
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
