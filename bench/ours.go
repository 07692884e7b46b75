package bench

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// oursLocker runs quorumlock at its defaults, with an OnNodeError observer
// that counts what it is told (the caller's view of a faulty node).
type oursLocker struct {
	nodes  []*pool.Node
	l      *redlock.Locker
	s      Settings
	faults atomic.Int64
}

var _ FaultReporter = (*oursLocker)(nil)

// newOurs returns quorumlock at its defaults, with pool.Config.Pooled set
// as asked, and with release notifications or (polling) without.
func newOurs(pooled, polling bool) func([]string, Settings) (Locker, error) {
	return func(addrs []string, s Settings) (Locker, error) {
		return ours(addrs, s, pooled, polling)
	}
}

// newOursApart returns quorumlock whose every mutex has a Locker and
// connections of its own, as clients in separate processes would: their
// waiters are not ordered by one Locker's queue, and only release
// notifications (or polling, without them) tell them the lock is free.
func newOursApart(polling bool) func([]string, Settings) (Locker, error) {
	return func(addrs []string, s Settings) (Locker, error) {
		return &apartLocker{addrs: addrs, s: s, polling: polling}, nil
	}
}

// apartLocker makes a quorumlock client per mutex.
type apartLocker struct {
	addrs   []string
	s       Settings
	polling bool
	clients []Locker
}

func (a *apartLocker) NewMutex(key string) Mutex {
	c, err := ours(a.addrs, a.s, false, a.polling)
	if err != nil {
		return errMutex{err}
	}
	a.clients = append(a.clients, c)
	return c.NewMutex(key)
}

func (a *apartLocker) Close() error {
	var errs []error
	for _, c := range a.clients {
		errs = append(errs, c.Close())
	}
	a.clients = nil
	return errors.Join(errs...)
}

// errMutex fails every call with the error that kept it from being made.
type errMutex struct{ err error }

func (m errMutex) Lock(context.Context) error   { return m.err }
func (m errMutex) Unlock(context.Context) error { return m.err }

func ours(addrs []string, s Settings, pooled, polling bool) (Locker, error) {
	return oursWith(addrs, s, pooled, redlock.Config{DisableWakeOnRelease: polling})
}

// oursWith returns quorumlock over pipelined or Pooled Nodes with cfg, plus
// the harness's OnNodeError counter.
func oursWith(addrs []string, s Settings, pooled bool, cfg redlock.Config) (*oursLocker, error) {
	o := &oursLocker{s: s}
	nodes := make([]redlock.Node, len(addrs))
	for i, addr := range addrs {
		n := pool.New(pool.Config{Addr: addr, MaxIdle: s.PoolSize, DialTimeout: s.DialTimeout, Pooled: pooled})
		o.nodes = append(o.nodes, n)
		nodes[i] = n
	}
	cfg.OnNodeError = func(op, addr string, err error) { o.faults.Add(1) }
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		o.Close()
		return nil, err
	}
	o.l = l
	return o, nil
}

// NodeFaults returns how many failed node calls OnNodeError reported.
func (o *oursLocker) NodeFaults() int64 { return o.faults.Load() }

func (o *oursLocker) NewMutex(key string) Mutex { return &oursMutex{o: o, key: key} }

func (o *oursLocker) Close() error {
	var errs []error
	for _, n := range o.nodes {
		errs = append(errs, n.Close())
	}
	return errors.Join(errs...)
}

type oursMutex struct {
	o    *oursLocker
	key  string
	held *redlock.Lock
}

func (m *oursMutex) Lock(ctx context.Context) error {
	lk, err := m.o.l.Lock(ctx, m.key, m.o.s.TTL)
	if err != nil {
		return err
	}
	m.held = lk
	return nil
}

func (m *oursMutex) Unlock(ctx context.Context) error {
	lk := m.held
	m.held = nil
	return lk.Unlock(ctx)
}
