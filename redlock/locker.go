package redlock

import (
	"context"
	"crypto/rand"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client.
type Node interface {
	// Addr names the master; it must be unique within a Locker.
	Addr() string
	// Do sends one command. A nil reply must come back as nil, a status
	// reply as a string, an integer as int64, and a Redis error reply as
	// an error. It must return when ctx ends.
	Do(ctx context.Context, cmd string, args ...any) (any, error)
	// Eval runs the Lua script src, whose SHA1 hex digest is hash (EVALSHA
	// with an EVAL fallback), with the same reply conventions as Do.
	Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error)
}

// Locker acquires locks over a fixed set of masters. It is safe for
// concurrent use and keeps no state per acquisition.
type Locker struct {
	nodes  []Node
	queues queues // this process's waiters, per key
	settings
}

// New returns a Locker over nodes. It checks the node list (at least one
// node, none nil, no two with the same Addr) and cfg; a bad one gives an
// error matching ErrInvalid. New sends nothing to Redis.
func New(nodes []Node, cfg Config) (*Locker, error) {
	if len(nodes) == 0 {
		return nil, invalid("no nodes")
	}
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if isNil(n) {
			return nil, invalid("node %d is nil", i)
		}
		if j, dup := seen[n.Addr()]; dup {
			return nil, invalid("nodes %d and %d share the address %q", j, i, n.Addr())
		}
		seen[n.Addr()] = i
	}
	s, err := cfg.settings(len(nodes))
	if err != nil {
		return nil, err
	}
	return &Locker{nodes: append([]Node(nil), nodes...), settings: s}, nil
}

// isNil reports whether x is nil or an interface holding a nil pointer,
// map, slice, function, interface or channel: a value whose methods would
// panic.
func isNil(x any) bool {
	if x == nil {
		return true
	}
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// Quorum returns the number of masters that must grant a lock.
func (l *Locker) Quorum() int { return l.quorum }

// Nodes returns the number of masters.
func (l *Locker) Nodes() int { return len(l.nodes) }

// TryLock makes one attempt to acquire key for ttl. On failure the error
// matches ErrNotAcquired and is a *QuorumError.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	return l.acquire(ctx, l.variant(), key, "", ttl, false)
}

// Lock acquires key for ttl, retrying after a failed attempt until it
// succeeds or ctx ends. Between attempts it waits for the Config.Retry
// backoff or, sooner, for a master to announce that the lock was released
// (when its Node can subscribe, as *pool.Node can). When ctx ends the error
// matches both ctx.Err() and ErrNotAcquired, and is a *QuorumError about the
// last attempt.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	return l.acquire(ctx, l.variant(), key, "", ttl, true)
}

func (l *Locker) variant() *variant {
	if l.fencing {
		return fenced
	}
	return plain
}

// acquire checks its input, then makes attempts of variant v until one
// succeeds, or only one when retry is false. An empty token means a fresh
// random token per attempt.
func (l *Locker) acquire(ctx context.Context, v *variant, key, token string, ttl time.Duration, retry bool) (*Lock, error) {
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	keys := v.keys(key)
	if len(keys) > 1 {
		if err := checkDerivable(key); err != nil {
			return nil, err
		}
	}
	fifo := retry && !v.unqueued
	var (
		t    *ticket         // our place among this process's waiters for key
		kick <-chan struct{} // a release of key by this process
		w    *waiter
	)
	defer func() {
		if t != nil {
			l.queues.leave(key, t)
		}
	}()
	if fifo && l.queues.busy(key) {
		// Others here wait for key already: queue up behind them
		// instead of barging ahead.
		t, kick = l.queues.join(key)
		if err := t.wait(ctx); err != nil {
			return nil, l.quorumError(opLock, key, nil, err)
		}
	}
	for attempt := 1; ; attempt++ {
		tok := token
		if tok == "" {
			tok = rand.Text() // fresh per attempt: a late release of this one never hits the next
		}
		lk, acks, err := l.attempt(ctx, v, key, keys, tok, ttl)
		if err == nil {
			w.close()
			if l.autoRenew {
				lk.startRenewal()
			}
			return lk, nil
		}
		if !retry {
			l.giveUp(ctx, v, key, keys, acks)
			return nil, err
		}
		if ctx.Err() == nil {
			if fifo && t == nil {
				t, kick = l.queues.join(key)
				if t.wait(ctx) == nil {
					continue // our turn: try at once
				}
			} else if w == nil {
				// Subscribe, then try once more at once: a release
				// that came before the subscription was not announced
				// to us.
				w = l.newWaiter(ctx, key)
				if w != nil {
					w.kick = kick
					continue
				}
				w = &waiter{kick: kick}
			}
			if ctx.Err() == nil && w.wait(ctx, l.retry.Backoff(attempt)) {
				continue
			}
		}
		w.close()
		l.giveUp(ctx, v, key, keys, acks)
		if qerr, ok := err.(*QuorumError); ok && qerr.Cause == nil {
			qerr.Cause = ctx.Err()
		}
		return nil, err
	}
}

func (l *Locker) checkCall(ctx context.Context, key string, ttl time.Duration) error {
	if ctx == nil {
		return invalid("nil context")
	}
	if key == "" {
		return invalid("empty key")
	}
	return l.checkTTL(ttl)
}

// attempt is one round of the Redlock algorithm. It also returns which
// masters' calls have returned, for clean-up that must not overtake them.
func (l *Locker) attempt(ctx context.Context, v *variant, key string, keys []string, token string, ttl time.Duration) (*Lock, *acks, error) {
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce

	// Each node's goroutine marks its acquire as returned, then waits for
	// the decision and releases the node if the attempt failed: a release
	// (here, or the lock's Unlock) never overtakes its node's acquire.
	decided := make(chan struct{})
	var failed bool // written before decided is closed
	acks := newAcks(len(l.nodes))

	acquire := v.acquire(keys, token, ms) // its arguments serve every node
	start := l.clock.Now()
	res, err := quorum.Do(ctx, len(l.nodes), quorum.Options{
		Need:    l.quorum,
		Timeout: l.nodeTimeout,
		Then: func(i int, vote quorum.Vote) {
			acks.ack(i, vote.Yes)
			<-decided
			if failed && v.releases(vote) { // a failed call may have landed
				l.release(ctx, v, i, "", keys, token) // announces nothing
			}
		},
	}, func(ctx context.Context, i int) quorum.Vote {
		return l.observe(opLock, i, acquire(ctx, l.nodes[i]))
	})
	var fence int64
	if err == nil && res.OK() && v.fenced {
		fence, err = l.raiseFence(ctx, res, keys[len(keys)-1])
	}
	validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)
	if err == nil && res.OK() && validity > 0 {
		close(decided)
		return newLock(l, v, key, keys, token, ttl, fence, start.Add(validity), acks), acks, nil
	}
	failed = true
	close(decided)
	qerr := l.quorumError(opLock, key, res, err)
	qerr.Late = err == nil && res.OK() // a quorum, but no validity left
	return nil, acks, qerr
}

// giveUp runs v's clean-up after the last failed attempt, whose acks make
// it wait for that attempt's calls on each master.
func (l *Locker) giveUp(ctx context.Context, v *variant, key string, keys []string, acks *acks) {
	if v.giveUp != nil {
		v.giveUp(context.WithoutCancel(ctx), l, key, keys, acks)
	}
}

// release runs v's release script on node i, announcing it on channel
// unless that is "", under a context that ctx's cancellation cannot cut
// short.
func (l *Locker) release(ctx context.Context, v *variant, i int, channel string, keys []string, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	defer cancel()
	l.observe(opRelease, i, v.release.with(keys, v.releaseArgs(channel, token)...).count(rctx, l.nodes[i]))
}

// observe tells Config.OnNodeError of a failed vote, and returns the vote.
func (l *Locker) observe(op string, i int, v quorum.Vote) quorum.Vote {
	if v.Err != nil && l.onNodeError != nil {
		l.onNodeError(op, l.nodes[i].Addr(), v.Err)
	}
	return v
}

// fanOut runs a counting script on every node, deciding at the quorum.
// With acks, a node's call waits until that node's acquire has returned;
// with grantedOnly, a node that did not grant that acquire is not called
// and counts as a refusal. then, if not nil, runs after each node's call
// returned (see quorum.Options.Then).
func (l *Locker) fanOut(ctx context.Context, op string, acks *acks, grantedOnly bool, s script, keys []string, then func(i int, v quorum.Vote), args ...any) (*quorum.Result, error) {
	c := s.with(keys, args...)
	return quorum.Do(ctx, len(l.nodes), quorum.Options{Need: l.quorum, Timeout: l.nodeTimeout, Then: then},
		func(ctx context.Context, i int) quorum.Vote {
			granted, err := acks.wait(ctx, i)
			if err != nil {
				if op == opUnlock && acks.runLater(i, func(granted bool) {
					if granted || !grantedOnly {
						rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
						defer cancel()
						l.observe(op, i, c.count(rctx, l.nodes[i]))
					}
				}) {
					err = fmt.Errorf("redlock: unlock %s: released once its acquire returns: %w", l.nodes[i].Addr(), err)
				}
				return l.observe(op, i, quorum.Vote{Err: err})
			}
			if grantedOnly && !granted {
				return quorum.Vote{}
			}
			return l.observe(op, i, c.count(ctx, l.nodes[i]))
		})
}

// acks tells which nodes' acquire calls of one attempt have returned, and
// which of them granted it. It allocates nothing unless a release has to
// wait.
type acks struct {
	mu       sync.Mutex
	returned []bool
	granted  []bool
	changed  chan struct{}      // closed at the next ack; made by a waiter
	later    map[int]func(bool) // run at node i's ack, with its grant
}

func newAcks(n int) *acks {
	b := make([]bool, 2*n)
	return &acks{returned: b[:n], granted: b[n:]}
}

func (a *acks) ack(i int, granted bool) {
	a.mu.Lock()
	a.returned[i], a.granted[i] = true, granted
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
	f := a.later[i]
	delete(a.later, i)
	a.mu.Unlock()
	if f != nil {
		f(granted)
	}
}

// runLater runs f when node i's acquire returns, on the goroutine of that call;
// it reports false, running nothing, when the acquire has returned already.
func (a *acks) runLater(i int, f func(granted bool)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.returned[i] {
		return false
	}
	if a.later == nil {
		a.later = make(map[int]func(bool))
	}
	a.later[i] = f
	return true
}

// wait returns once node i's acquire has returned, telling whether it
// granted, or with ctx's error. A nil *acks never waits and reports a grant.
func (a *acks) wait(ctx context.Context, i int) (granted bool, err error) {
	if a == nil {
		return true, nil
	}
	for {
		a.mu.Lock()
		if a.returned[i] {
			granted := a.granted[i]
			a.mu.Unlock()
			return granted, nil
		}
		if a.changed == nil {
			a.changed = make(chan struct{})
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// quorumError describes a failed round; res is nil when ctx had ended before
// anything was sent.
func (l *Locker) quorumError(op, key string, res *quorum.Result, cause error) *QuorumError {
	if res == nil {
		return &QuorumError{Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum, Pending: len(l.nodes), Cause: cause}
	}
	return &QuorumError{
		Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum,
		Granted: res.Yes, Refused: res.No, Failed: res.Failed, Pending: res.Pending(),
		Cause:      cause,
		NodeErrors: res.Err(func(i int) string { return l.nodes[i].Addr() }),
	}
}
