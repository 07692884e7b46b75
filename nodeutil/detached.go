package nodeutil

import (
	"context"
	"sync/atomic"
	"time"
)

// A detached call runs a Node's command on a goroutine of its own, under a
// context that keeps the caller's values but not its end, and its caller
// waits for it only while the caller's context lasts: the caller returns
// when its context ends, and the command goes on in the client, under the
// client's timeouts and, for a script call, until Linger past the
// caller's deadline (so that the EVAL after a NOSCRIPT still goes out).
//
// One Detached is one call, and costs the call what the rules need and
// no more: one allocation for the Job that embeds it (which is also the
// context the client gets), one for the goroutine, and one for the
// channel that tells the caller the call returned; a Detached whose Done
// closes at the deadline adds one timer. It is never reused: a client may
// keep the context it was given past the call (a hook, a span), and must
// find it as it was.

// Job is one detached call (Detached.Run): Send sends its commands, under
// ctx (the Detached the Job embeds), and returns the reply.
type Job interface {
	Send(ctx context.Context) (any, error)
}

// Detached is the state of one detached call and the context.Context its
// Job runs under. Embed it, zero, in a Job made for that one call, and
// call Run once.
//
// As a context it has the values of the caller's context, never its end.
// Its deadline, when it has one, is Linger past the caller's deadline
// (past the call's start when the caller has none). Its Done channel is
// nil unless Run was asked for a timer: then it closes at that deadline
// (Err is context.DeadlineExceeded), or when the Job returned (Err is
// context.Canceled, as after a cancel func), whichever comes first.
type Detached struct {
	parent      context.Context
	deadline    time.Time
	hasDeadline bool
	timed       bool          // done closes at the deadline (a timer)
	done        chan struct{} // closed when Send returned, or when a timed deadline passed
	timer       *time.Timer
	state       atomic.Uint32 // running, returned or expired: who closed done
	reply       any
	err         error
}

// The states of a Detached.
const (
	running = iota
	returned
	expired
)

// Run runs job.Send on a goroutine of its own, with d as its context, and
// waits for it or for ctx, whichever ends first: it returns Send's reply,
// or ctx's error the moment ctx ends (the Job goes on). A ctx that has
// ended already sends nothing. Call it once, with the Job that embeds d.
//
// With linger >= 0 the context has a deadline linger past ctx's (past now
// when ctx has none). With timer, its Done closes at that deadline, for a
// client that stops waiting only when Done says so (go-redis's connection
// pool, redigo); Run then also returns, with context.DeadlineExceeded, when
// the deadline passes before ctx's end. Without timer, Done is nil and the
// deadline is the client's to honour (rueidis and valkey-go set their
// connections' deadlines from it); a Job checks Expired before sending
// anything more. With linger < 0 the context has no deadline: the client's
// timeouts alone bound the call, and timer is ignored.
func (d *Detached) Run(ctx context.Context, job Job, linger time.Duration, timer bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // never sent
	}
	d.parent = ctx
	d.done = make(chan struct{})
	if linger >= 0 {
		bound, ok := ctx.Deadline()
		if !ok {
			bound = time.Now()
		}
		d.deadline, d.hasDeadline = bound.Add(linger), true
		if timer {
			d.timed = true
			d.timer = time.AfterFunc(time.Until(d.deadline), d.expire)
		}
	}
	go d.run(job)
	select {
	case <-d.done:
		if d.state.Load() == returned {
			return d.reply, d.err
		}
		return nil, context.DeadlineExceeded // the timed deadline passed first
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// run is the call's goroutine.
func (d *Detached) run(job Job) {
	reply, err := job.Send(d)
	d.reply, d.err = reply, err
	if d.state.CompareAndSwap(running, returned) {
		if d.timer != nil {
			d.timer.Stop()
		}
		close(d.done)
	}
}

// expire ends a timed Detached at its deadline.
func (d *Detached) expire() {
	if d.state.CompareAndSwap(running, expired) {
		close(d.done)
	}
}

// Expired reports whether the call's deadline has passed (for a timed
// Detached, whether Done is closed): a Job sends nothing more then.
func (d *Detached) Expired() bool {
	if d.timed {
		return d.Err() != nil
	}
	return d.hasDeadline && !time.Now().Before(d.deadline)
}

// Deadline returns the call's deadline, if it has one (see Run).
func (d *Detached) Deadline() (time.Time, bool) { return d.deadline, d.hasDeadline }

// Done returns nil, or, for a timed Detached, a channel that closes at the
// deadline or when the Job returned.
func (d *Detached) Done() <-chan struct{} {
	if !d.timed {
		return nil
	}
	return d.done
}

// Err returns nil while Done is open (always, when Done is nil), then
// context.DeadlineExceeded if the deadline closed it, context.Canceled if
// the Job's return did.
func (d *Detached) Err() error {
	if !d.timed {
		return nil
	}
	select {
	case <-d.done:
	default:
		return nil
	}
	if d.state.Load() == expired {
		return context.DeadlineExceeded
	}
	return context.Canceled
}

// Value returns the caller's context's value for key.
func (d *Detached) Value(key any) any { return d.parent.Value(key) }

// String names the context, as the standard library's do.
func (d *Detached) String() string { return "nodeutil.Detached" }
