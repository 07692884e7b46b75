package pool

import (
	"context"
	"errors"
	"time"
)

// Solo reads. The reply to a command usually reaches its caller through
// the connection's reader goroutine, which costs a goroutine hand-off per
// round trip: the reader is woken when the command is handed to it and
// again when the reply arrives, and then it wakes the caller. When a
// caller writes its own command, alone, on an idle connection, it reads
// the reply itself instead, as a client with a connection per call would
// (a Do caller: redlock calls a single master that way).
//
// Replies are still read by one goroutine at a time and in the order the
// commands were written. Whoever reads holds mc.token: the reader goroutine
// takes it per reply, a solo caller from before its write until its reply
// is read. Commands written meanwhile go to pending, and the reader, with
// the first of them in hand, waits for the token. A solo caller whose
// context (or the waiter's) ends before any byte of its reply arrived gives
// the read up: it puts its command in mc.handback and returns the token,
// and the reader reads that reply first, within the stall timeout, and
// completes the command as it completes any whose caller gave up. A solo
// caller gives up only while no byte of its reply has arrived (its wait
// reads whatever arrives into the connection's prefetch buffer, and the
// reply is then read to its end), so giving up never leaves a reply half
// read. Nothing reads the socket while no command is in flight, which
// keeps the idle check before a write exact (see idleChecker).

// errGaveUp is awaitReply's report that the read's context ended first.
var errGaveUp = errors.New("the caller gave up waiting")

// aLongTimeAgo is a read deadline that ends a wait at once.
var aLongTimeAgo = time.Unix(1, 0)

// mayReadSolo takes mc's read token for a caller that will read its reply
// itself, if nobody holds it and the connection supports a solo read's
// wait (idleChecker.canWait).
func (mc *muxConn) mayReadSolo() bool {
	if !mc.c.checker().canWait() {
		return false
	}
	select {
	case <-mc.token:
		return true
	default:
		return false
	}
}

// goSolo makes r, written on mc whose token the caller holds, a solo read,
// which its Do caller makes when submit returns. It reports false for an
// asynchronous call, whose reply the reader reads.
func (m *mux) goSolo(mc *muxConn, r *request) bool {
	if r.done != nil {
		return false
	}
	r.solo = mc
	mc.refs.Add(1) // mc's commands are drained only once the read ends
	return true
}

// readSolo reads r's reply on mc on the caller's goroutine and completes
// r, or hands the read back to mc's reader when r's context ends first.
func (m *mux) readSolo(mc *muxConn, r *request) {
	defer m.release(mc)
	r.solo = nil
	watch, giveUpAt := r.ctx, deadlineOf(r.ctx)
	var (
		reply any
		err   error
	)
	switch werr := mc.awaitReply(watch, giveUpAt, m.stall); {
	case werr == errGaveUp:
		mc.handback <- r // buffered 1, and empty: see read
		mc.token <- struct{}{}
		return
	case werr != nil: // the connection broke, or no reply within the stall timeout
		mc.settled(r)
		err = m.failRead(mc, werr)
	default:
		reply, _, err = m.receive(mc, r)
	}
	mc.token <- struct{}{}
	m.finish(r, reply, err)
}

// deadlineOf is ctx's deadline, or the zero time.
func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// awaitReply waits, holding mc's token, until the socket has bytes of a
// reply, or reports why not: errGaveUp at giveUpAt or when watch ends, a
// timeout past stall, or the connection's error.
func (mc *muxConn) awaitReply(watch context.Context, giveUpAt time.Time, stall time.Duration) error {
	var stallAt time.Time
	if stall > 0 {
		stallAt = time.Now().Add(stall)
	}
	deadline := stallAt
	if !giveUpAt.IsZero() && (deadline.IsZero() || giveUpAt.Before(deadline)) {
		deadline = giveUpAt
	}
	if err := mc.c.raw.SetReadDeadline(deadline); err != nil {
		return err
	}
	if watch.Done() != nil { // after the deadline is set, which would undo an interrupt
		halt := context.AfterFunc(watch, mc.interrupt)
		defer func() {
			if !halt() {
				<-mc.interrupted // its deadline is set: a later read's replaces it
			}
		}()
	}
	err := mc.c.checker().wait()
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

// interruptWait ends a wait in awaitReply at once; the end of its watch runs it.
func (mc *muxConn) interruptWait() {
	mc.c.raw.SetReadDeadline(aLongTimeAgo)
	mc.interrupted <- struct{}{} // buffered 1: awaitReply takes it
}
