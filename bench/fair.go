package bench

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// newOursFair returns quorumlock's fair lock (Locker.Fair) at the
// library's defaults, every mutex with a Locker and connections of its
// own, as clients in separate processes would: the masters alone order
// the waiters (tickets drawn from a quorum), woken by release
// notifications.
func newOursFair(addrs []string, s Settings) (Locker, error) {
	return &fairLocker{apartLocker{addrs: addrs, s: s}}, nil
}

// fairLocker makes a quorumlock client per mutex, locking the fair lock.
type fairLocker struct{ apartLocker }

func (f *fairLocker) NewMutex(key string) Mutex {
	c, err := ours(f.addrs, f.s, false, false)
	if err != nil {
		return errMutex{err}
	}
	f.clients = append(f.clients, c)
	o := c.(*oursLocker)
	return &fairMutex{f: o.l.Fair(key), ttl: f.s.TTL}
}

// fairMutex is one client's fair lock.
type fairMutex struct {
	f    *redlock.Fair
	ttl  time.Duration
	held *redlock.Lock
}

func (m *fairMutex) Lock(ctx context.Context) error {
	lk, err := m.f.Lock(ctx, m.ttl)
	if err != nil {
		return err
	}
	m.held = lk
	return nil
}

func (m *fairMutex) Unlock(ctx context.Context) error {
	lk := m.held
	m.held = nil
	return lk.Unlock(ctx)
}
