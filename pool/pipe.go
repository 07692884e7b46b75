package pool

import (
	"errors"
	"runtime"
	"sync"
	"time"
)

// A pipe is one pipelined connection (rueidis's pipe.go is the model).
// Callers put their commands on its queue (queue.go) and never block on
// the connection: whoever finds nobody writing writes what is queued,
// while few bytes are in flight, and otherwise the pipe's writer
// goroutine does (pipe_write.go); the pipe's reader goroutine reads the
// replies in order and completes each command (pipe_read.go). A pipe that
// fails stays failed: its connection is closed, every command on it is
// completed with the error (or, one that never left the process, taken to
// the next connection: call.go), and the mux replaces it (mux.go). A
// caller that gave up leaves its command in the pipe: its reply is read
// and dropped, so the connection stays in step.
type pipe struct {
	c     *conn
	q     queue
	stall time.Duration // StallTimeout: the longest wait for a reply
	// finish completes a command (mux.finish), detach is told once that
	// the pipe failed (mux.detach).
	finish func(r *request, reply any, err error)
	detach func(p *pipe)

	// The writer's, used by whoever holds the writing (queue.writing).
	scripts scriptsSent // scriptsent.go
	spare   []*request  // the last batch's slice, for the next
}

// muxQueue bounds the commands on a pipe, queued or in flight: beyond it,
// a command fails at once with errBusy, unsent, instead of piling up on a
// stalled master.
const muxQueue = 4096

var (
	// errStalled fails a pipe whose oldest command got no reply in time.
	errStalled = errors.New("no reply within the stall timeout")
	// errBusy is the error of a command that found muxQueue on its pipe.
	errBusy = errors.New("too many commands waiting for the connection")
	// errNoConn is the error of the dead pipe: no connection is up.
	errNoConn = errors.New("not connected")
)

// notSentError is the error of a command that provably never left this
// process: it may go out on a fresh connection (mux.resend).
type notSentError struct{ err error }

func (e notSentError) Error() string { return e.err.Error() }
func (e notSentError) Unwrap() error { return e.err }

// newPipe makes a pipe on c whose writer takes first what queued holds,
// and starts its goroutines, counted in wg.
func newPipe(c *conn, stall time.Duration, queued []*request, finish func(*request, any, error), detach func(*pipe), wg *sync.WaitGroup) *pipe {
	p := &pipe{c: c, stall: stall, finish: finish, detach: detach}
	p.q.init()
	if len(queued) > 0 {
		p.q.unsent, p.q.writing = queued, true
		p.q.kickWriter()
	}
	wg.Go(p.writeLoop)
	wg.Go(p.readLoop)
	return p
}

// deadPipe returns a pipe without a connection, failed from the start: it
// stands for "no connection" (a mux's pipe is never nil), and every
// command put on it goes to wait for a dial.
func deadPipe() *pipe {
	p := &pipe{}
	p.q.err = errNoConn
	return p
}

// submit puts r on p, and writes what is queued if nobody writes; it
// fails with a notSentError when p failed. It never blocks on the
// connection.
func (p *pipe) submit(r *request) error {
	write, busy, err := p.q.put(r)
	if err != nil || !write {
		return err
	}
	if !layers.combine {
		p.q.handOff()
		return nil
	}
	if busy && layers.yield {
		// Other callers use the connection, and are about to queue
		// commands: let them run first, and write theirs with this one.
		// Fewer, larger writes cost the client and the master less per
		// command; a caller alone writes at once.
		runtime.Gosched()
	}
	p.flush()
	return nil
}

// fail fails p for err, once: its connection is closed (which ends a read
// or write in progress), the mux is told, and the commands that p's queue
// holds are completed: those never written are not sent, and may go out
// on the next connection; those written get the error. A command that a
// writer or a reader holds is completed by its holder. fail returns the
// error p failed with, the first one.
func (p *pipe) fail(err error) error {
	unsent, sent, first, cause := p.q.fail(err)
	if !first {
		return cause
	}
	p.c.Close()
	p.detach(p)
	for _, r := range unsent {
		p.finish(r, nil, notSentError{cause})
	}
	for _, r := range sent {
		p.finish(r, nil, cause)
	}
	return cause
}

// failIO fails p for err, a read's or write's transport error or timeout
// (no reply, or no room for a write, within the stall timeout), and
// returns the error p failed with.
func (p *pipe) failIO(err error) error {
	if isTimeout(err) {
		err = errStalled
	}
	return p.fail(err)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// finishAll completes each of reqs with err.
func (p *pipe) finishAll(reqs []*request, err error) {
	for _, r := range reqs {
		p.finish(r, nil, err)
	}
}
