package redlock

// The invariant this file keeps: on each master, a lock's release (the
// clean-up of a failed attempt, Unlock, a writer's withdrawal) and its
// Extend go out only after that master's acquire call of the same attempt
// has returned. A release that overtook its acquire would find nothing to
// delete, and the acquire landing after it would leave the key held on that
// master until its TTL ran out; an Extend that overtook it would be refused
// and count as lost. The attempt acks each master's acquire as it returns
// (attempt.go); every later call to that master for the same lock is sent
// at that ack (acks.after), never before: at once when the acquire has
// returned already, else from the goroutine that completes the acquire
// (with an AsyncNode, the connection's reader), which only sends it and
// never waits. The acquire of an AsyncNode InOrder is acked at the latest
// when the attempt's node timeout passes: its calls reach the master in the
// order they were made (one pipelined connection), so a release sent then
// queues behind the acquire still pending there, as a release of a call
// that returned at its timeout always did. A release is always sent, also
// when it is due after its fan-out gave up waiting (under a node timeout of
// its own); a late Extend is not sent. Calls waiting at one ack go out in
// the order they were made.

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// acks tells which nodes' acquire calls of one attempt have returned, and
// how each voted. It allocates nothing more unless a call has to wait.
type acks struct {
	mu       sync.Mutex
	fifo     []bool // per node: an AsyncNode whose calls reach the master in order
	returned []bool
	votes    []quorum.Vote
	sends    []deferredSend        // one fan-out call per node, sent at its ack
	later    [][]func(quorum.Vote) // run at node i's ack, with its vote

	// The clean-up of a failed attempt (see cleaning): the nodes whose
	// clean-up has not returned yet, and cleaned, closed when none is left.
	uncleaned atomic.Int32
	cleaned   chan struct{}
}

// deferredSend is a fan-out's call to a node whose acquire had not returned
// yet: the arguments of Locker.sendAfter, kept without a closure.
type deferredSend struct {
	l           *Locker
	ctx         context.Context
	op          string
	c           *call
	grantedOnly bool
	done        quorum.Done
}

// acksStore keeps an acks and, for small n, its slices in one allocation.
type acksStore struct {
	a        acks
	returned [8]bool
	votes    [8]quorum.Vote
	sends    [8]deferredSend
}

// init sets up st.a for the nodes (fifo tells which are AsyncNodes) and
// returns it.
func (st *acksStore) init(fifo []bool) *acks {
	n := len(fifo)
	if n > len(st.returned) {
		st.a = acks{returned: make([]bool, n), votes: make([]quorum.Vote, n), sends: make([]deferredSend, n)}
	} else {
		st.a.returned, st.a.votes, st.a.sends = st.returned[:n], st.votes[:n], st.sends[:n]
	}
	st.a.fifo = fifo
	return &st.a
}

// attemptState is what one attempt allocates: its acks, and the Lock it
// returns if it succeeds, in one allocation (with the first attempt's,
// the Lock call's waiting too; see Locker.acquire).
type attemptState struct {
	acks acksStore
	lock Lock
}

// ack records that node i's acquire returned with vote, and sends what
// waited for it, on the calling goroutine. It is the attempt's
// quorum.Options.Then, with ThenAtTimeout: the first ack of a node counts.
// The ack at the node timeout (ErrNoAnswer, the call still pending) counts
// only for an AsyncNode InOrder, whose later calls queue behind the pending
// one on its connection; other Nodes are acked when their call returns.
func (a *acks) ack(i int, vote quorum.Vote) {
	a.mu.Lock()
	if a.returned[i] || !a.fifo[i] && vote.Err == quorum.ErrNoAnswer {
		a.mu.Unlock()
		return
	}
	a.returned[i], a.votes[i] = true, vote
	d := a.sends[i]
	a.sends[i] = deferredSend{}
	var fs []func(quorum.Vote)
	if a.later != nil {
		fs, a.later[i] = a.later[i], nil
	}
	a.mu.Unlock()
	if d.l != nil {
		d.l.sendAfter(d.ctx, d.op, d.c, i, d.grantedOnly, vote, d.done)
	}
	for _, f := range fs {
		f(vote)
	}
}

// sendAfter is Locker.sendAfter once node i's acquire returned: now, or
// at its ack, without a closure unless another call waits there already.
func (a *acks) sendAfter(l *Locker, ctx context.Context, op string, c *call, i int, grantedOnly bool, done quorum.Done) {
	if a == nil {
		l.sendAfter(ctx, op, c, i, grantedOnly, quorum.Vote{Yes: true}, done)
		return
	}
	a.mu.Lock()
	if a.returned[i] {
		vote := a.votes[i]
		a.mu.Unlock()
		l.sendAfter(ctx, op, c, i, grantedOnly, vote, done)
		return
	}
	if a.sends[i].l == nil {
		a.sends[i] = deferredSend{l: l, ctx: ctx, op: op, c: c, grantedOnly: grantedOnly, done: done}
		a.mu.Unlock()
		return
	}
	a.mu.Unlock()
	a.after(i, func(acquire quorum.Vote) {
		l.sendAfter(ctx, op, c, i, grantedOnly, acquire, done)
	})
}

// after runs f with node i's acquire vote once that acquire has returned:
// now, on the caller's goroutine, or at the ack, on the goroutine that
// completes the acquire. f must not block. A nil *acks runs f now with a
// grant.
func (a *acks) after(i int, f func(quorum.Vote)) {
	if a == nil {
		f(quorum.Vote{Yes: true})
		return
	}
	a.mu.Lock()
	if !a.returned[i] {
		if a.later == nil {
			a.later = make([][]func(quorum.Vote), len(a.returned))
		}
		a.later[i] = append(a.later[i], f)
		a.mu.Unlock()
		return
	}
	vote := a.votes[i]
	a.mu.Unlock()
	f(vote)
}

// cleaning starts the count of a failed attempt's clean-up over n nodes
// and returns what each node's clean-up calls once it returned (its
// release's reply came, or it needed none). awaitCleanup waits for all.
func (a *acks) cleaning(n int) func() {
	a.cleaned = make(chan struct{})
	a.uncleaned.Store(int32(n))
	return func() {
		if a.uncleaned.Add(-1) == 0 {
			close(a.cleaned)
		}
	}
}

// awaitCleanup waits until the failed attempt's clean-up returned on every
// node, for at most d, or until ctx ends. The next attempt of the same Lock
// call goes out after it: sent earlier, it would find this attempt's keys,
// not yet released, and count them as refusals; and since a failed
// attempt's release announces nothing, a waiter woken by the release it
// waited for could then fail and sleep through its whole backoff, the
// masters free by then.
func (a *acks) awaitCleanup(ctx context.Context, d time.Duration) {
	if a == nil || a.cleaned == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-a.cleaned:
	case <-t.C:
	case <-ctx.Done():
	}
}

// errLateExtend is the vote of an Extend whose master's acquire returned
// only after the Extend's fan-out had given up on it: it is not sent.
var errLateExtend = errors.New("redlock: extend not sent: the master's acquire returned after the node timeout")

// fanOut runs a counting script on every node, deciding at the quorum.
// With acks, a node's call is sent once that node's acquire has returned
// (see the top of this file); with grantedOnly, a node that did not grant
// that acquire is not called and counts as a refusal. then, if not nil,
// runs after each node's call returned (see quorum.Options.Then); it must
// not block.
func (l *Locker) fanOut(ctx context.Context, op string, acks *acks, grantedOnly bool, s script, keys []string, then func(i int, v quorum.Vote), args ...any) (*quorum.Result, error) {
	c := s.with(keys, args...)
	return quorum.Async(ctx, len(l.nodes), quorum.Options{Need: l.quorum, Timeout: l.nodeTimeout, Then: then, Failed: l.failed(op)},
		func(ctx context.Context, i int, done quorum.Done) {
			acks.sendAfter(l, ctx, op, c, i, grantedOnly, done)
		})
}

// sendAfter sends c to node i, whose acquire returned with vote acquire;
// ctx is the fan-out's node context, ended when the fan-out gave up.
func (l *Locker) sendAfter(ctx context.Context, op string, c *call, i int, grantedOnly bool, acquire quorum.Vote, done quorum.Done) {
	switch {
	case grantedOnly && !acquire.Yes:
		done.Vote(i, quorum.Vote{})
	case ctx.Err() == nil:
		l.send(ctx, c, i, done)
	case op == opExtend:
		done.Vote(i, quorum.Vote{Err: errLateExtend})
	default: // a release is always sent, under a node timeout of its own
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
		l.send(rctx, c, i, voteFunc(func(i int, v quorum.Vote) {
			cancel()
			done.Vote(i, v)
		}))
	}
}
