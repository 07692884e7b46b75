package pool

import (
	"context"
	"errors"
	"time"
)

// Solo reads (layers.solo). The reply to a command usually reaches its
// caller through the pipe's reader goroutine, which costs a goroutine
// hand-off per round trip: the reader is woken when the command is marked
// sent and again when the reply arrives, and then it wakes the caller.
// When a Do caller writes its own command, alone, on an idle connection,
// it reads the reply itself instead, as a client with a connection per
// call would (redlock calls a single master that way).
//
// Replies are still read one at a time, in the order the commands were
// written: the caller holds its command, the oldest sent, from its write
// on (queue.markSent), and the reader goroutine waits for the commands
// behind it until the caller is done with it (queue.done). A caller whose
// context ends before any byte of its reply arrived gives the read up: it
// hands its command back (queue.handBack), and the reader reads that
// reply first, within the stall timeout, and completes the command as it
// completes any whose caller gave up. A caller gives up only while no
// byte of its reply has arrived (its wait reads whatever arrives into the
// connection's prefetch buffer, prefetch.go, and the reply is then read
// to its end), so giving up never leaves a reply half read. Nothing reads
// the socket while no command is in flight, which keeps the idle check
// before a write exact (see idleChecker).

// soloWait is what a pipe's solo reads share; one runs at a time.
type soloWait struct {
	can         bool          // the connection supports the wait (idleChecker.canWait)
	c           *conn         // the pipe's
	interrupt   func()        // interruptWait, made once
	interrupted chan struct{} // buffered 1: interrupt ran
}

func (w *soloWait) init(c *conn) {
	w.c, w.can = c, c.checker().canWait()
	if w.can {
		w.interrupt = w.interruptWait
		w.interrupted = make(chan struct{}, 1)
	}
}

// errGaveUp is awaitReply's report that the read's context ended first.
var errGaveUp = errors.New("the caller gave up waiting")

// aLongTimeAgo is a read deadline that ends a wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// readSolo reads the reply of r, held by its caller, on the caller's
// goroutine and completes r, or hands r back to the reader goroutine when
// r's context ends first.
func (p *pipe) readSolo(r *request) {
	switch err := p.solo.awaitReply(r.ctx, p.stall); {
	case err == errGaveUp:
		if err := p.q.handBack(); err != nil {
			p.finish(r, nil, err) // p failed: r is still its holder's
		}
	case err != nil: // the connection broke, or no reply within the stall timeout
		p.finish(r, nil, p.failIO(err))
	default:
		p.receive(r)
	}
}

// awaitReply waits until the socket has bytes of a reply, or reports why
// not: errGaveUp at watch's deadline or when it ends, a timeout past
// stall, or the connection's error.
func (w *soloWait) awaitReply(watch context.Context, stall time.Duration) error {
	giveUpAt, _ := watch.Deadline()
	var stallAt time.Time
	if stall > 0 {
		stallAt = time.Now().Add(stall)
	}
	deadline := stallAt
	if !giveUpAt.IsZero() && (deadline.IsZero() || giveUpAt.Before(deadline)) {
		deadline = giveUpAt
	}
	if err := w.c.raw.SetReadDeadline(deadline); err != nil {
		return err
	}
	if watch.Done() != nil { // after the deadline is set, which would undo an interrupt
		halt := context.AfterFunc(watch, w.interrupt)
		defer func() {
			if !halt() {
				<-w.interrupted // its deadline is set: a later read's replaces it
			}
		}()
	}
	err := w.c.checker().wait()
	switch {
	case err == nil || !isTimeout(err):
		return err
	case !stallAt.IsZero() && !time.Now().Before(stallAt) && watch.Err() == nil &&
		(giveUpAt.IsZero() || time.Now().Before(giveUpAt)):
		return err // the stall timeout, and only it, passed
	default:
		return errGaveUp
	}
}

// interruptWait ends a wait in awaitReply at once; the end of its watch
// runs it.
func (w *soloWait) interruptWait() {
	w.c.raw.SetReadDeadline(aLongTimeAgo)
	w.interrupted <- struct{}{} // buffered 1: awaitReply takes it
}
