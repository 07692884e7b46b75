package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/redlock"
)

// freezer freezes a client between sending its SETs and reading their
// replies: the command reaches the master and executes, but the reply is
// handed to the client only after the freeze. It acts on the first call on
// each master that acquires the armed key (a SET, or a script, as the
// fencing variant uses), so the releases that follow are not frozen.
type freezer struct {
	mu      sync.Mutex
	key     string
	taken   map[int]bool
	d       time.Duration
	resume  time.Time // real-time freeze: when the client resumes
	exact   func()    // clock-exact freeze: makes the time pass
	arrived int       // replies in, for the clock-exact freeze
	ready   chan struct{}
	calls   sync.WaitGroup
}

// armReal freezes the next acquisition of key for d of real time. The
// client's node timeout still runs, as it is a timer of the same process.
func (f *freezer) armReal(key string, d time.Duration) {
	f.arm(key, d, nil)
}

// armExact freezes the next acquisition of key with pass, which makes d pass
// for the client and the masters at once when every reply is in: the replies
// then come back in time for the node timeout, but late for the validity.
func (f *freezer) armExact(key string, d time.Duration, pass func()) {
	f.arm(key, d, pass)
}

func (f *freezer) arm(key string, d time.Duration, exact func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.key, f.d, f.exact = key, d, exact
	f.taken, f.resume, f.arrived = map[int]bool{}, time.Time{}, 0
	f.ready = make(chan struct{})
}

// take reports whether the call of node on key is to be frozen.
func (f *freezer) take(node int, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.key == "" || key != f.key || f.taken[node] {
		return false
	}
	f.taken[node] = true
	if f.resume.IsZero() {
		f.resume = time.Now().Add(f.d) // the SETs have just been sent
	}
	f.calls.Add(1)
	return true
}

// hold keeps a reply from the client until the freeze ends.
func (f *freezer) hold(ctx context.Context) {
	defer f.calls.Done()
	f.mu.Lock()
	resume, exact, ready := f.resume, f.exact, f.ready
	if exact != nil {
		f.arrived++
		if f.arrived == Nodes {
			exact()
			close(ready)
		}
	}
	f.mu.Unlock()
	if exact == nil {
		time.Sleep(time.Until(resume)) // frozen: no timer of ours fires
		return
	}
	select {
	case <-ready:
	case <-ctx.Done():
	}
}

// wait returns when every frozen call has returned.
func (f *freezer) wait() { f.calls.Wait() }

var _ redlock.Capable = (*frozenNode)(nil)

// frozenNode is a master as a frozen client sees it.
type frozenNode struct {
	redlock.Node
	i int
	f *freezer
}

// Abilities are the wrapped Node's but its script calls, which go through
// Eval, where the freeze is.
func (n *frozenNode) Abilities() redlock.Abilities {
	a := redlock.AbilitiesOf(n.Node)
	a.EvalPrepared, a.EvalAsync = nil, nil
	return a
}

// Do freezes a SET of the armed key.
func (n *frozenNode) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if !strings.EqualFold(cmd, "SET") || len(args) == 0 || !n.f.take(n.i, fmt.Sprint(args[0])) {
		return n.Node.Do(ctx, cmd, args...)
	}
	defer n.f.hold(ctx)
	return n.Node.Do(ctx, cmd, args...)
}

// Eval freezes an acquiring script of the armed key (one that is not a
// release: releases come after the frozen call). The lock key is KEYS[2]
// (KEYS[1] is the attempt's tombstone).
func (n *frozenNode) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if len(keys) < 2 || !n.f.take(n.i, keys[1]) {
		return n.Node.Eval(ctx, hash, src, keys, args...)
	}
	defer n.f.hold(ctx)
	return n.Node.Eval(ctx, hash, src, keys, args...)
}

// pausedClient freezes client A between its SETs and their replies for
// longer than the TTL, twice: once in real time, and once with the time made
// to pass exactly (the client's clock and the masters' clocks jump by the
// freeze), which is what the client sees when the replies are read in time
// for its node timeout but after its validity.
func pausedClient(ctx context.Context, r *Run) error {
	const (
		ttl    = time.Second
		freeze = ttl + 200*time.Millisecond
		// A's node timeout leaves the clock-exact freeze time to make the
		// masters' time pass before the replies are due.
		nodeTimeout = 800 * time.Millisecond
	)
	f := &freezer{}
	aClock := clock.NewSkewed(clock.Real, 1)
	e, err := r.Env(ctx, workload.EnvConfig{
		Clients: 2,
		Locker: func(c int) redlock.Config {
			if c == 0 {
				cfg := workload.LockerConfig(nodeTimeout)
				cfg.Clock = aClock
				return cfg
			}
			return workload.LockerConfig(workload.NodeTimeout)
		},
		Wrap: func(c, i int, n redlock.Node) redlock.Node {
			if c == 0 {
				return &frozenNode{Node: n, i: i, f: f}
			}
			return n
		},
	})
	if err != nil {
		return err
	}
	a, b := e.Client(0), e.Client(1)
	pause := fault.Fault{Kind: fault.ClientPause, Node: -1, Clients: []int{0}, Arg: freeze}

	// 1. Real time: A's node timeout gives up on the frozen replies.
	f.armReal(e.Key("k1"), freeze)
	from := e.Now()
	_, errA := a.Acquire(ctx, "k1", ttl, true)
	r.Check("real-time freeze: A does not take the lock", errors.Is(errA, redlock.ErrNotAcquired), "%s", errText(errA))
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	hb, errB := b.Acquire(lctx, "k1", ttl, false) // while A is still frozen
	cancel()
	r.Check("real-time freeze: B acquires", errB == nil, "%s", errText(errB))
	if hb != nil {
		hb.Write()
		hb.Release(ctx)
	}
	f.wait()
	e.Faults.Record(pause, from, e.Now(), "A frozen between its SETs and their replies (real time)")

	// 2. Exact: the replies come back in time, but elapsed > validity.
	f.armExact(e.Key("k2"), freeze, func() {
		aClock.Jump(freeze)
		var wg sync.WaitGroup
		for _, n := range e.Cluster.Nodes() {
			wg.Go(func() { cluster.ClockJump(context.WithoutCancel(ctx), n.Addr(), freeze) }) // the masters' time passes too
		}
		wg.Wait()
	})
	from = e.Now()
	_, errA = a.Acquire(ctx, "k2", ttl, true)
	f.wait()
	e.Faults.Record(pause, from, e.Now(), "A frozen between its SETs and their replies (clock-exact)")
	var qe *redlock.QuorumError
	late := errors.As(errA, &qe) && qe.Late
	r.Check("clock-exact freeze: A does not take the lock (quorum granted, elapsed > validity)",
		errors.Is(errA, redlock.ErrNotAcquired) && late, "%s", errText(errA))
	lctx, cancel = context.WithTimeout(ctx, 5*time.Second)
	hb, errB = b.Acquire(lctx, "k2", ttl, false)
	cancel()
	r.Check("clock-exact freeze: B acquires", errB == nil, "%s", errText(errB))
	if hb != nil {
		hb.Write()
		hb.Release(ctx)
	}

	c := r.Checked()
	r.Check("no overlap", c.Safe(), "%d overlaps", len(c.Overlaps))
	r.Check("A never recorded as holder", perClient(c, 2)[0] == 0, "A held %d times", perClient(c, 2)[0])
	left, err := e.AwaitNoKeys(ctx, 3*time.Second)
	if err != nil {
		return err
	}
	r.Check("no key left behind", left == 0, "%d keys", left)
	return nil
}
