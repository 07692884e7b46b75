package quorum

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
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
}

func newResult(n, need int) *Result {
	if n > smallN {
		return &Result{Votes: make([]Vote, n), Answered: make([]bool, n), Need: need}
	}
	st := &resultStore{}
	st.res = Result{Votes: st.votes[:n], Answered: st.answered[:n], Need: need}
	return &st.res
}

// Options configure one Do.
type Options struct {
	// Need is how many yes votes decide success: 1 <= Need <= n.
	Need int
	// Timeout bounds each node's call; 0 means no bound but the context's
	// deadline. A node that has not answered by then counts as failed with
	// ErrNoAnswer, even if its call does not honour its context.
	Timeout time.Duration
	// Then, if set, runs in node i's goroutine right after its call
	// returned, also when Do has returned already. It is the place for
	// follow-up work that must not overtake the call on that node.
	Then func(i int, v Vote)
}

type answer struct {
	i int
	v Vote
}

// Do calls call(ctx_i, i) for every i in [0, n) concurrently and returns as
// soon as the outcome is decided. Each ctx_i carries the values of ctx but
// not its cancellation, and ends after opts.Timeout.
//
// If ctx ends before the outcome is decided, Do returns the votes so far and
// ctx.Err(). Do returns an error without calling anything for n < 1 or a Need
// outside [1, n].
func Do(ctx context.Context, n int, opts Options, call func(ctx context.Context, i int) Vote) (*Result, error) {
	if n < 1 || opts.Need < 1 || opts.Need > n {
		return nil, fmt.Errorf("quorum: need %d of %d nodes", opts.Need, n)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := newResult(n, opts.Need)
	answers := make(chan answer, n) // never blocks a node goroutine
	// One context for all the node calls: they start together, so they
	// share a deadline, which is also Do's. The last call to return
	// releases it, after sending its answer.
	nctx, cancel := nodeContext(ctx, opts.Timeout)
	var running atomic.Int32
	running.Store(int32(n))
	for i := range n {
		go func() {
			v := call(nctx, i)
			answers <- answer{i, v}
			if running.Add(-1) == 0 {
				cancel()
			}
			if opts.Then != nil {
				opts.Then(i, v)
			}
		}()
	}

	for !res.decided() {
		select {
		case a := <-answers:
			res.record(a.i, a.v)
		case <-nctx.Done():
			// The timeout, or every call returned (their answers are
			// queued already): take what is there, then the rest have
			// no answer.
			for drained := false; !drained; {
				select {
				case a := <-answers:
					res.record(a.i, a.v)
				default:
					drained = true
				}
			}
			for i := range res.Answered {
				if !res.Answered[i] {
					res.record(i, Vote{Err: ErrNoAnswer})
				}
			}
		case <-ctx.Done():
			return res, ctx.Err()
		}
	}
	return res, nil
}

// nodeContext is ctx without its cancellation, ending after timeout (if
// positive).
func nodeContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	detached := context.WithoutCancel(ctx)
	if timeout <= 0 {
		return detached, func() {}
	}
	return context.WithTimeout(detached, timeout)
}
