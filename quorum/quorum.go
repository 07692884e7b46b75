package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/quorumlock/quorumlock/internal/assist"
	"github.com/quorumlock/quorumlock/internal/serial"
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

// Result is the outcome of one Do as it stood when the outcome was decided.
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
// label(i) (or "node i" when label is nil), into a *multierror.Error. It
// returns nil when no node failed.
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
	if r.Answered[i] {
		return
	}
	r.Answered[i] = true
	if v.Err != nil {
		v.Yes = false
	}
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

// smallN is the node count up to which a Result's votes live in one
// allocation with it.
const smallN = 8

// resultStore holds a Result and, for small n, its votes.
type resultStore struct {
	res      Result
	votes    [smallN]Vote
	answered [smallN]bool
	nodes    [smallN]nodeState
	state    []nodeState // per node, for Async
}

// nodeState is what Async knows of one node's call beyond its vote.
type nodeState uint8

const (
	returned nodeState = 1 << iota // its vote was reported
	timedOut                       // it had not answered at the timeout
)

// init sets up st.res for n nodes.
func (st *resultStore) init(n, need int) {
	if n > smallN {
		st.res = Result{Votes: make([]Vote, n), Answered: make([]bool, n), Need: need}
		st.state = make([]nodeState, n)
		return
	}
	st.res = Result{Votes: st.votes[:n], Answered: st.answered[:n], Need: need}
	st.state = st.nodes[:n]
}

// Options configure one Do or Async.
type Options struct {
	// Need is how many yes votes decide success: 1 <= Need <= n.
	Need int
	// Timeout bounds the node calls: one timer per fan-out, started when
	// the calls are. A node that has not answered by then counts as failed
	// with ErrNoAnswer, even if its call does not honour its context. 0
	// means no bound but the deadline of Do's context, which the node
	// calls' context keeps (without its cancellation).
	Timeout time.Duration
	// Then, if set, runs right after node i's call returned (Do) or
	// reported its vote (Async), on that goroutine, also when Do has
	// returned already. It is the place for follow-up work that must not
	// overtake the call on that node. With Async it may run on a
	// connection's reader goroutine: it must not block.
	//
	// With ThenAtTimeout, Then also runs, with ErrNoAnswer, for each node
	// that had not answered when the timeout passed, on the timer's
	// goroutine; such a node's Then runs again when its call returns.
	Then          func(i int, v Vote)
	ThenAtTimeout bool
	// Failed, if set, is told of every node whose vote failed, once: on
	// Do's goroutine before Do returns for the votes in its Result (those
	// that timed out included, with ErrNoAnswer), and for a call that
	// fails, or has not answered at the timeout, after the outcome was
	// decided, on a goroutine of this package that runs such reports one
	// after the other, never on the goroutine that completed the call. A
	// call reported with ErrNoAnswer is not reported again when it fails
	// later.
	Failed func(i int, err error)
}

// Done takes the votes of one fan-out's calls (see Async): Vote(i, v)
// reports node i's vote. It must be called exactly once per node, from any
// goroutine, also before the start function returned. It never blocks
// beyond a short critical section, and runs Options.Then.
type Done interface {
	Vote(i int, v Vote)
}

// Do calls call(ctx_i, i) for every i in [0, n), each in a goroutine of its
// own, and returns as soon as the outcome is decided. Each ctx_i carries the
// values of ctx but not its cancellation, and ends after opts.Timeout.
//
// If ctx ends before the outcome is decided, Do returns the votes so far and
// ctx.Err(). Do returns an error without calling anything for n < 1 or a Need
// outside [1, n].
func Do(ctx context.Context, n int, opts Options, call func(ctx context.Context, i int) Vote) (*Result, error) {
	return Async(ctx, n, opts, func(ctx context.Context, i int, done Done) {
		go func() { done.Vote(i, call(ctx, i)) }()
	})
}

// Async is Do for calls that complete by callback: start(ctx_i, i, done)
// sends node i's call and returns without waiting for it; the call then
// reports its vote with done.Vote(i, vote). Votes are counted as they arrive,
// under one lock and one timer per fan-out, and Async starts no goroutine:
// a node that never answers costs its pending call, not a parked goroutine.
// start runs on Async's goroutine, for i in order; it must not block.
// ctx_i is as in Do; a start that needs to wait (for a connection, say)
// hands the wait to a goroutine bounded by ctx_i. With n = 1, ctx_i is an
// assist.Waiter: a transport may have Async read the call's reply itself
// (see Offer), which saves waking a goroutine per call.
func Async(ctx context.Context, n int, opts Options, start func(ctx context.Context, i int, done Done)) (*Result, error) {
	if n < 1 || opts.Need < 1 || opts.Need > n {
		return nil, fmt.Errorf("quorum: need %d of %d nodes", opts.Need, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f := &fanout{n: n, opts: opts, wake: make(chan struct{}, 1)}
	f.st.init(n, opts.Need)
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
	f.starting = true // before the calls start: nothing else has seen f
	for i := range n {
		start(&f.nctx, i, f)
	}
	f.mu.Lock()
	f.starting = false
	solo := f.solo
	f.solo = nil
	f.mu.Unlock()
	if solo != nil {
		solo.ReadReply(ctx) // the only call's reply, read here (see Offer)
	}

	res := &f.st.res
	var err error
	select {
	case <-f.wake: // decided, or the timeout
	case <-ctx.Done():
		err = ctx.Err()
	}
	f.mu.Lock()
	f.over = true
	switch {
	case res.decided():
		err = nil
	case f.expired:
		for i := range res.Answered {
			if !res.Answered[i] {
				res.record(i, Vote{Err: ErrNoAnswer})
			}
		}
		err = nil
	}
	f.mu.Unlock()
	if opts.Failed != nil {
		for i, v := range res.Votes {
			if res.Answered[i] && v.Err != nil {
				opts.Failed(i, v.Err)
			}
		}
	}
	return res, err
}

// fanout is the state of one Async.
type fanout struct {
	n    int
	opts Options
	nctx nodeCtx
	wake chan struct{} // gets one send once st.res is decided or the timeout passed

	deadline    time.Time
	hasDeadline bool

	mu       sync.Mutex
	st       resultStore
	returned int           // votes reported
	over     bool          // Async returned: st.res no longer changes
	woken    bool          // wake is closed
	timer    *time.Timer   // ends nctx at deadline; nil without one
	expired  bool          // the deadline passed
	ended    chan struct{} // nctx.Done(), made on demand
	starting bool          // Async's goroutine runs the start functions
	solo     assist.Reader // the reply Async reads itself, offered while starting
}

// Offer implements assist.Waiter: a fan-out of one call reads that call's
// reply on Async's goroutine, which would otherwise only wait to be woken
// by the goroutine reading it. It accepts one offer, made while the calls
// start, for a call started with the fan-out's own node context, whose end
// is its deadline (so the reader needs no cancellation of its own);
// Async's ctx stops the read early.
func (f *fanout) Offer(ctx context.Context, r assist.Reader) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n != 1 || !f.starting || f.solo != nil || ctx != context.Context(&f.nctx) {
		return false
	}
	f.solo = r
	return true
}

// Vote counts node i's vote while the outcome is open; a vote that comes
// later is late, and reported through lateReports if it failed.
func (f *fanout) Vote(i int, v Vote) {
	if v.Err != nil {
		v.Yes = false
	}
	res := &f.st.res
	f.mu.Lock()
	f.returned++
	f.st.state[i] |= returned
	if f.returned == f.n && f.timer != nil {
		f.timer.Stop() // every vote is in: nothing is left to time out
	}
	late := false
	if !res.Answered[i] && f.st.state[i]&timedOut == 0 { // else reported as ErrNoAnswer
		if f.over || res.decided() {
			late = v.Err != nil
		} else {
			res.record(i, v)
			if res.decided() {
				f.wakeLocked()
			}
		}
	}
	f.mu.Unlock()
	if late && f.opts.Failed != nil {
		failed, err := f.opts.Failed, v.Err
		lateReports.Go(func() { failed(i, err) })
	}
	if f.opts.Then != nil {
		f.opts.Then(i, v)
	}
}

// expire is the timer's: the node calls' context ends. The nodes that
// have not answered are marked as timed out: once Async has returned, they
// are reported to Failed with ErrNoAnswer here, and with ThenAtTimeout
// Then hears of them.
func (f *fanout) expire() {
	f.mu.Lock()
	f.expired = true
	if f.ended != nil {
		close(f.ended)
	}
	f.wakeLocked()
	var pending []int
	var buf [smallN]int
	report := f.over && f.opts.Failed != nil
	for i, st := range f.st.state {
		if st&returned != 0 {
			continue
		}
		f.st.state[i] |= timedOut
		if pending == nil {
			pending = buf[:0]
		}
		pending = append(pending, i)
	}
	f.mu.Unlock()
	for _, i := range pending {
		if report && !f.st.res.Answered[i] { // Answered no longer changes: over
			failed := f.opts.Failed
			lateReports.Go(func() { failed(i, ErrNoAnswer) })
		}
		if f.opts.ThenAtTimeout && f.opts.Then != nil {
			f.opts.Then(i, Vote{Err: ErrNoAnswer})
		}
	}
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

func (c *nodeCtx) Value(key any) any {
	if key == assist.Key {
		return c.f
	}
	return c.parent.Value(key)
}

func (c *nodeCtx) String() string { return "quorum.nodeContext" }

// lateReports runs the reports of late failures on a goroutine of its own,
// in order: such a report never runs on the goroutine that completed the
// call (a connection's reader), and a burst of them (every call pending on
// a master that froze) costs one goroutine, which exits when the queue is
// empty.
var lateReports serial.Queue
