package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Mutex is a sync.Locker over one key of a Locker, for code written
// against sync.Locker. Make it with Locker.Mutex.
type Mutex struct {
	l   *Locker
	key string
	ttl time.Duration

	mu   sync.Mutex
	held *Lock // the current hold, nil while unlocked
	err  error // how the last hold ended, if badly
}

var _ sync.Locker = (*Mutex)(nil)

// Mutex returns a sync.Locker over key, for code written against
// sync.Locker: Lock acquires key for ttl, waiting as Locker.Lock does for
// as long as it takes (masters down included), and keeps it renewed until
// Unlock, which releases it. Lock calls of one Locker on one key queue in
// order, so goroutines of one process share a Mutex as they would a
// sync.Mutex, and processes exclude each other through the masters.
//
// sync.Locker has no errors, so: Lock panics when the Locker cannot lock
// at all (it was closed, or key or ttl is invalid), as sync.Mutex panics
// on misuse, and so does Unlock of a Mutex that is not locked. A lock lost
// while held (its renewals failed for longer than its validity) cannot be
// reported by Unlock: Err says so afterwards, and Held gives the Lock, whose
// Done and Context end at the loss. Code that can handle errors should use
// Locker.Lock or Locker.Do.
func (l *Locker) Mutex(key string, ttl time.Duration) *Mutex {
	return &Mutex{l: l, key: key, ttl: ttl}
}

// Lock acquires the Mutex's key, waiting until it can, and starts its
// renewal. It panics with an error matching ErrInvalid or ErrClosed when
// the Locker cannot lock at all.
func (m *Mutex) Lock() {
	lk, err := m.l.Lock(context.Background(), m.key, m.ttl)
	if err != nil { // the context never ends: only misuse fails
		panic(fmt.Errorf("redlock: Mutex.Lock of %q: %w", m.key, err))
	}
	lk.startRenewal()
	m.mu.Lock()
	m.held, m.err = lk, nil
	m.mu.Unlock()
}

// Unlock releases the Mutex's key, and returns once a quorum released it
// or the node timeout passed. It panics when the Mutex is not locked.
// Whether the hold ended badly (lost while held, or its release failed)
// is what Err says afterwards.
func (m *Mutex) Unlock() {
	m.mu.Lock()
	lk := m.held
	m.held = nil
	m.mu.Unlock()
	if lk == nil {
		panic(fmt.Sprintf("redlock: Mutex.Unlock of %q, which is not locked", m.key))
	}
	lost := lk.Err()
	err := lk.Unlock(context.Background())
	if lost != nil && errors.Is(lost, ErrLockLost) {
		err = fmt.Errorf("redlock: mutex %q: lock lost while held: %w", m.key, lost)
	}
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
}

// Held returns the current hold of the Mutex's key, nil while it is not
// locked: its Done, Context and Until tell the holder when the lock can no
// longer be guaranteed.
func (m *Mutex) Held() *Lock {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.held
}

// Err reports how the last hold ended: nil when it was released while
// still held, an error matching ErrLockLost when it was lost while held or
// its release failed. Lock clears it.
func (m *Mutex) Err() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}
