package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Vote is one node's answer.
type Vote struct {
	// Yes is the node's grant. A vote with Err set is never a yes.
	Yes bool
	// Value is whatever the call wants to pass back (a reply, a counter).
	Value any
	// Err is set when the node failed (an error reply, a network error, a
	// timeout); a vote with neither Yes nor Err is a refusal.
	Err error
}

// ErrNoAnswer is the error of a node that had not answered when its timeout
// passed.
var ErrNoAnswer = errors.New("quorum: no answer within the node timeout")

// Result is the outcome of one fan-out as it stood when the outcome was
// decided.
type Result struct {
	// Votes holds each node's vote by index; a node that had not answered
	// when the outcome was decided has the zero Vote and Answered false.
	Votes    []Vote
	Answered []bool
	// Yes, No and Failed count the answered votes.
	Yes, No, Failed int
	// Need is the number of yes votes that make the outcome a success.
	Need int
}

// OK reports whether the yes votes reached Need.
func (r *Result) OK() bool { return r.Yes >= r.Need }

// Pending is the number of nodes that had not answered when the outcome was
// decided.
func (r *Result) Pending() int { return len(r.Votes) - r.Yes - r.No - r.Failed }

// Err aggregates the failed nodes' errors in node order, each prefixed with
// label(i) (or "node i" when label is nil), into a *multierror.Error whose
// message is one line. It returns nil when no node failed.
func (r *Result) Err(label func(i int) string) error {
	var all *multierror.Error
	for i, v := range r.Votes {
		if !r.Answered[i] || v.Err == nil {
			continue
		}
		name := fmt.Sprintf("node %d", i)
		if label != nil {
			name = label(i)
		}
		all = multierror.Append(all, &NodeError{Index: i, Node: name, Err: v.Err})
	}
	if all != nil {
		all.ErrorFormat = oneLine
	}
	return all.ErrorOrNil()
}

// oneLine formats node errors as "a: err; b: err".
func oneLine(errs []error) string {
	msgs := make([]string, len(errs))
	for i, err := range errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

// NodeError is one failed node's error in Result.Err.
type NodeError struct {
	Index int    // the node's index
	Node  string // the node's label, e.g. its address
	Err   error
}

func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }

// Unwrap returns the node's error.
func (e *NodeError) Unwrap() error { return e.Err }

// decided reports whether more votes can no longer change the outcome.
func (r *Result) decided() bool {
	return r.Yes >= r.Need || r.No+r.Failed > len(r.Votes)-r.Need
}

func (r *Result) record(i int, v Vote) {
	r.Answered[i] = true
	r.Votes[i] = v
	switch {
	case v.Err != nil:
		r.Failed++
	case v.Yes:
		r.Yes++
	default:
		r.No++
	}
}

// Options configure one fan-out.
type Options struct {
	// Need is how many yes votes decide success: 1 <= Need <= n.
	Need int
	// Timeout bounds the node calls: one timer per fan-out, started when
	// the calls are. A node that has not answered by then counts as failed
	// with ErrNoAnswer, even if its call does not honour its context. 0
	// means no bound but the deadline of the caller's context, which the
	// node calls' context keeps (without its cancellation).
	Timeout time.Duration
}

// Tally counts the votes of one fan-out's calls (see Async).
type Tally interface {
	// Vote reports node i's vote; it must be called exactly once per node,
	// from any goroutine, also before the start function returned. It
	// never blocks beyond a short critical section. It reports whether the
	// vote is part of the fan-out's Result: counted while the outcome was
	// open, or already recorded as ErrNoAnswer at the timeout. A vote that
	// comes after the outcome was decided is not (it is late): its caller
	// alone knows of it.
	Vote(i int, v Vote) (counted bool)
}

// Do calls call(ctx_i, i) for every i in [0, n), each in a goroutine of its
// own, and returns as soon as the outcome is decided. Each ctx_i carries the
// values of ctx but not its cancellation, and ends after opts.Timeout.
//
// If ctx ends before the outcome is decided, Do returns the votes so far and
// ctx.Err(); the calls go on. Do returns an error without calling anything
// for n < 1 or a Need outside [1, n].
func Do(ctx context.Context, n int, opts Options, call func(ctx context.Context, i int) Vote) (*Result, error) {
	return Async(ctx, n, opts, func(ctx context.Context, i int, done Tally) {
		go func() { done.Vote(i, call(ctx, i)) }()
	})
}

// Async is Do for calls that complete by callback: start(ctx_i, i, done)
// sends node i's call and returns without waiting for it; the call then
// reports its vote with done.Vote(i, vote). Votes are counted as they arrive,
// under one lock and one timer per fan-out, and Async starts no goroutine:
// a node that never answers costs its pending call, not a parked goroutine.
// start runs on Async's goroutine, for i in order; it must not block. The
// calls are started even when ctx has ended already: whether to send
// anything then is the caller's decision.
func Async(ctx context.Context, n int, opts Options, start func(ctx context.Context, i int, done Tally)) (*Result, error) {
	if n < 1 || opts.Need < 1 || opts.Need > n {
		return nil, fmt.Errorf("quorum: need %d of %d nodes", opts.Need, n)
	}
	f := &fanout{n: n, wake: make(chan struct{}, 1)}
	f.init(n, opts.Need)
	// One context for all the node calls (f.nctx): they start together,
	// so they share a deadline, and one timer ends it. The last vote
	// stops the timer.
	f.nctx.parent, f.nctx.f = ctx, f
	if opts.Timeout > 0 {
		f.deadline, f.hasDeadline = time.Now().Add(opts.Timeout), true
	} else {
		f.deadline, f.hasDeadline = ctx.Deadline()
	}
	if f.hasDeadline {
		f.mu.Lock() // the timer may fire before it is stored
		f.timer = time.AfterFunc(time.Until(f.deadline), f.expire)
		f.mu.Unlock()
	}
	for i := range n {
		start(&f.nctx, i, f)
	}
	res := &f.res
	var err error
	select {
	case <-f.wake: // decided, or the timeout
	case <-ctx.Done():
		err = ctx.Err()
	}
	f.mu.Lock()
	f.over = true
	if res.decided() || f.expired {
		err = nil
	}
	f.mu.Unlock()
	return res, err
}

// smallN is the node count up to which a Result's votes live in one
// allocation with the fan-out.
const smallN = 8

// fanout is the state of one Async.
type fanout struct {
	n    int
	nctx nodeCtx
	wake chan struct{} // gets one send once res is decided or the timeout passed

	deadline    time.Time
	hasDeadline bool

	mu       sync.Mutex
	res      Result
	votes    [smallN]Vote
	answered [smallN]bool
	returned int           // votes reported
	over     bool          // Async returned: res no longer changes
	woken    bool          // wake was sent to
	timer    *time.Timer   // ends nctx at deadline; nil without one
	expired  bool          // the deadline passed
	ended    chan struct{} // nctx.Done(), made on demand
}

// init sets up f.res for n nodes.
func (f *fanout) init(n, need int) {
	if n > smallN {
		f.res = Result{Votes: make([]Vote, n), Answered: make([]bool, n), Need: need}
		return
	}
	f.res = Result{Votes: f.votes[:n], Answered: f.answered[:n], Need: need}
}

// Vote implements Tally: it counts node i's vote while the outcome is open.
func (f *fanout) Vote(i int, v Vote) bool {
	if v.Err != nil {
		v.Yes = false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.returned++
	if f.returned == f.n && f.timer != nil {
		f.timer.Stop() // every vote is in: nothing is left to time out
	}
	switch {
	case f.res.Answered[i]: // recorded as ErrNoAnswer at the timeout
		return true
	case f.over || f.res.decided():
		return false
	}
	f.res.record(i, v)
	if f.res.decided() {
		f.wakeLocked()
	}
	return true
}

// expire is the timer's: the node calls' context ends, and, while the
// outcome is open, the nodes that have not answered count as failed with
// ErrNoAnswer.
func (f *fanout) expire() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired = true
	if f.ended != nil {
		close(f.ended)
	}
	if !f.over && !f.res.decided() {
		for i, answered := range f.res.Answered {
			if !answered {
				f.res.record(i, Vote{Err: ErrNoAnswer})
			}
		}
	}
	f.wakeLocked()
}

func (f *fanout) wakeLocked() {
	if !f.woken {
		f.woken = true
		f.wake <- struct{}{} // buffered 1: never blocks
	}
}

// nodeCtx is the node calls' context of one fan-out: the values of the
// caller's context without its cancellation, the fan-out's deadline, and a
// Done channel made only for a call that asks for it. It lives in the
// fanout, so that it costs no allocation of its own.
type nodeCtx struct {
	parent context.Context
	f      *fanout
}

func (c *nodeCtx) Deadline() (time.Time, bool) { return c.f.deadline, c.f.hasDeadline }

func (c *nodeCtx) Done() <-chan struct{} {
	f := c.f
	if !f.hasDeadline {
		return nil // never ends, as context.WithoutCancel's
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended == nil {
		f.ended = make(chan struct{})
		if f.expired {
			close(f.ended)
		}
	}
	return f.ended
}

func (c *nodeCtx) Err() error {
	f := c.f
	if !f.hasDeadline {
		return nil
	}
	f.mu.Lock()
	expired := f.expired
	f.mu.Unlock()
	if expired || !time.Now().Before(f.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *nodeCtx) Value(key any) any { return c.parent.Value(key) }

func (c *nodeCtx) String() string { return "quorum.nodeContext" }
