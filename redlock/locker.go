package redlock

import (
	"context"
	"crypto/rand"
	"reflect"
	"sync"
	"time"
)

// Locker acquires locks over a fixed set of masters. It is safe for
// concurrent use. It keeps no state of any one acquisition (that is the
// *Lock's); what it shares between calls is its configuration and, per key,
// the queue of this process's Lock calls waiting for that key (see
// queue.go).
type Locker struct {
	nodes  []Node
	fifo   []bool // per node: an AsyncNode whose calls arrive in order (see acks.ack)
	queues queues // this process's waiters, per key
	settings

	failedOnce sync.Once
	failedBy   map[string]func(i int, err error) // see failed
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
	l := &Locker{nodes: append([]Node(nil), nodes...), fifo: make([]bool, len(nodes)), settings: s}
	for i, n := range nodes {
		a, ok := n.(AsyncNode)
		l.fifo[i] = ok && a.InOrder()
	}
	return l, nil
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
// (when its Node is a Subscriber, as *pool.Node is, unless
// Config.DisableWakeOnRelease). When ctx ends the error matches both
// ctx.Err() and ErrNotAcquired, and is a *QuorumError about the last
// attempt.
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
// random token per attempt. Config.Observer hears of every call.
func (l *Locker) acquire(ctx context.Context, v *variant, key, token string, ttl time.Duration, retry bool) (lk *Lock, err error) {
	attempts := 0
	if l.observer != nil {
		start := l.clock.Now()
		defer func() {
			l.observer.Acquire(AcquireEvent{Key: key, Kind: v.kind, Wait: l.clock.Now().Sub(start), Attempts: attempts, Err: err})
		}()
	}
	if v.owned && token == "" {
		return nil, invalid("empty owner")
	}
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	// The Lock call's waiting, its keys and its first attempt's state
	// share one allocation; later attempts get their own (an earlier one's
	// acks may still be waited on by its late releases).
	first := &struct {
		w   waiting
		st  attemptState
		key [1]string
	}{}
	var keys []string
	if v.oneKey {
		first.key[0] = key
		keys = first.key[:]
	} else {
		keys = v.keys(key)
	}
	if len(keys) > 1 && !v.explicit {
		if err := checkDerivable(key); err != nil {
			return nil, err
		}
	}
	w := &first.w
	l.initWaiting(w, key, retry && !v.unqueued)
	defer w.close()
	if err := w.start(ctx); err != nil {
		return nil, l.quorumError(opLock, key, nil, err)
	}
	for {
		attempts++
		tok := token
		if tok == "" {
			tok = rand.Text() // fresh per attempt: a late release of this one never hits the next
		}
		var st *attemptState
		if attempts == 1 {
			st = &first.st
		}
		got, acks, aerr := l.attempt(ctx, v, key, keys, tok, ttl, st)
		if aerr == nil {
			l.granted(got)
			return got, nil
		}
		if retry {
			acks.awaitCleanup(ctx, l.nodeTimeout)
			if w.next(ctx, attempts) {
				continue
			}
		}
		l.giveUp(ctx, v, key, keys, acks)
		if qerr, ok := aerr.(*QuorumError); ok && retry && qerr.Cause == nil {
			qerr.Cause = ctx.Err()
		}
		return nil, aerr
	}
}

// granted starts what a new lock needs: its renewal with Config.AutoRenew,
// and with an Observer its expiry timer, so that a loss is told even when
// nobody watches Done.
func (l *Locker) granted(lk *Lock) {
	if l.observer != nil {
		lk.mu.Lock()
		lk.watchLocked()
		lk.mu.Unlock()
	}
	if l.autoRenew {
		lk.startRenewal()
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
