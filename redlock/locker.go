package redlock

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Locker acquires locks over a fixed set of masters. It is safe for
// concurrent use. It keeps no state of any one acquisition (that is the
// *Lock's); what it shares between calls is its configuration and, per key,
// the queue of this process's Lock calls waiting for that key (see
// queue.go).
type Locker struct {
	masters []*master // one per node, in the order of the nodes (master.go)
	queues  queues    // this process's waiters, per key
	settings

	// states follows which masters fail (master.down), when the Observer
	// is a NodeStateObserver (observe.go); nil otherwise.
	states NodeStateObserver

	defaults callConfig // what a call runs with that has no Options
	guard    guardState // the restart guard (guard.go)
	probe    string     // the key durable confirmations write (layout.Probe)

	inflight counter     // releases and record rounds in flight, for Close
	renewing sync.Map    // *Lock -> struct{}: the locks being renewed, for Close
	closed   atomic.Bool // Close was called
}

// New returns a Locker over nodes. It checks the node list (at least one
// node, none nil, each with an address, no two with the same Addr), cfg,
// and that every Node can give what cfg asks of it (its Abilities): the
// master's identity for the restart guard, unless the guard is off
// (Config.RestartGuard < 0, or Config.FsyncAlways); confirmations for
// Config.Durability. A bad one gives an error matching ErrInvalid that
// names the node and what it lacks. New sends nothing to Redis.
func New(nodes []Node, cfg Config) (*Locker, error) {
	if len(nodes) == 0 {
		return nil, invalid("no nodes")
	}
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if isNil(n) {
			return nil, invalid("node %d is nil", i)
		}
		if n.Addr() == "" {
			return nil, invalid("node %d (%T) has no address", i, n)
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
	l := &Locker{masters: make([]*master, len(nodes)), settings: s,
		defaults: callConfig{fencing: s.fencing, autoRenew: s.autoRenew, retry: s.retry}}
	l.guard = guardState{on: cfg.RestartGuard >= 0 && !cfg.FsyncAlways, strict: cfg.RestartGuard, key: layout.Registry(s.prefix)}
	l.probe = layout.Probe(s.prefix)
	for i, n := range nodes {
		m := newMaster(l, i, n)
		if err := l.checkAbilities(m); err != nil {
			return nil, err
		}
		l.masters[i] = m
	}
	if so, ok := cfg.Observer.(NodeStateObserver); ok {
		l.states = so
	}
	return l, nil
}

// checkAbilities refuses, with ErrInvalid, a Node that lacks an ability
// the configuration needs.
func (l *Locker) checkAbilities(m *master) error {
	switch {
	case l.guard.on && m.ab.Identity == nil:
		why := "" // a Node may say why it cannot (the adapters' New over a client they cannot watch)
		if r, ok := m.node.(interface{ Identity() (Identity, error) }); ok {
			if _, err := r.Identity(); err != nil {
				why = " (" + err.Error() + ")"
			}
		}
		return invalid("node %d (%s, %T) cannot report its master's identity (no Abilities.Identity%s), which the restart guard needs: use a Node that can, or turn the guard off (Config.RestartGuard < 0, or Config.FsyncAlways for masters that persist every write)", m.i, m.addr(), m.node, why)
	case l.durability.on() && m.ab.Confirm == nil:
		return invalid("node %d (%s, %T) cannot confirm durable grants (no Abilities.Confirm), which Config.Durability asks for", m.i, m.addr(), m.node)
	}
	return nil
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
func (l *Locker) Nodes() int { return len(l.masters) }

// TryLock makes one attempt to acquire key for ttl. On failure the error
// matches ErrNotAcquired and is a *QuorumError. opts override the
// Locker's Config for this call (Option).
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration, opts ...Option) (*Lock, error) {
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	return l.acquire(ctx, cc, l.variant(cc), key, ttl, false)
}

// Lock acquires key for ttl, retrying after a failed attempt until it
// succeeds or ctx ends. Between attempts it waits for the Config.Retry
// backoff or, sooner, for a master to announce that the lock was released
// (when its Node is a Subscriber, as *pool.Node is, unless
// Config.DisableWakeOnRelease). When ctx ends the error matches both
// ctx.Err() and ErrNotAcquired, and is a *QuorumError about the last
// attempt. opts override the Locker's Config for this call (Option).
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration, opts ...Option) (*Lock, error) {
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	return l.acquire(ctx, cc, l.variant(cc), key, ttl, true)
}

// variant is the plain or the fenced lock, as cc says, with a holder
// record of cc's metadata when it has some.
func (l *Locker) variant(cc *callConfig) *variant {
	switch {
	case cc.metadata != nil && cc.fencing:
		return withRecord(recordedFenced, cc.metadata)
	case cc.metadata != nil:
		return withRecord(recordedPlain, cc.metadata)
	case cc.fencing:
		return fenced
	}
	return plain
}

// MaxKeyLen is the longest key a Locker takes, its Config.KeyPrefix
// included: every call carries it to every master, and one far longer
// would not reach them within a node timeout.
const MaxKeyLen = 8 << 10

func (l *Locker) checkCall(ctx context.Context, key string, ttl time.Duration) error {
	if err := l.checkMade(); err != nil {
		return err
	}
	if ctx == nil {
		return invalid("nil context")
	}
	if err := l.checkKey(key); err != nil {
		return err
	}
	return l.checkTTL(ttl)
}

// checkMade refuses a Locker that New did not make.
func (l *Locker) checkMade() error {
	if l == nil || len(l.masters) == 0 {
		return invalid("a Locker not made by New")
	}
	return nil
}

// checkKey refuses an empty key, and one too long.
func (l *Locker) checkKey(key string) error {
	switch {
	case key == "":
		return invalid("empty key")
	case len(l.prefix)+len(key) > MaxKeyLen:
		return invalid("key of %d bytes (with its prefix): the longest is %d", len(l.prefix)+len(key), MaxKeyLen)
	}
	return nil
}
