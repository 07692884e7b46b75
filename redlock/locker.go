package redlock

import (
	"context"
	"reflect"
	"sync/atomic"
	"time"
)

// Locker acquires locks over a fixed set of masters. It is safe for
// concurrent use. It keeps no state of any one acquisition (that is the
// *Lock's); what it shares between calls is its configuration and, per key,
// the queue of this process's Lock calls waiting for that key (see
// queue.go).
type Locker struct {
	nodes   []Node
	senders []sender // one per node, made in New (sender.go)
	queues  queues   // this process's waiters, per key
	settings

	// states, with down, follows which masters fail, when the Observer
	// is a NodeStateObserver (observe.go); nil otherwise.
	states NodeStateObserver
	down   []atomic.Bool

	guard guardState // the restart guard (guard.go)
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
	l := &Locker{nodes: append([]Node(nil), nodes...), senders: make([]sender, len(nodes)), settings: s}
	for i, n := range nodes {
		l.senders[i] = newSender(i, n)
		if s.durability.on() && l.senders[i].durable == nil {
			return nil, invalid("node %d (%s) cannot confirm durable grants (no DurableNode ability), which Config.Durability asks for", i, n.Addr())
		}
	}
	l.guard.strict, l.guard.durable = cfg.RestartGuard, s.durability.Local
	if so, ok := cfg.Observer.(NodeStateObserver); ok {
		l.states, l.down = so, make([]atomic.Bool, len(nodes))
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
	return l.acquire(ctx, l.variant(), key, ttl, false)
}

// Lock acquires key for ttl, retrying after a failed attempt until it
// succeeds or ctx ends. Between attempts it waits for the Config.Retry
// backoff or, sooner, for a master to announce that the lock was released
// (when its Node is a Subscriber, as *pool.Node is, unless
// Config.DisableWakeOnRelease). When ctx ends the error matches both
// ctx.Err() and ErrNotAcquired, and is a *QuorumError about the last
// attempt.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	return l.acquire(ctx, l.variant(), key, ttl, true)
}

func (l *Locker) variant() *variant {
	if l.fencing {
		return fenced
	}
	return plain
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
