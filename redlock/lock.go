package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/clock"
)

// Lock is one acquisition of a key. Its methods are safe for concurrent use.
type Lock struct {
	l          *Locker
	key, token string

	mu       sync.Mutex
	until    time.Time
	released bool
}

func newLock(l *Locker, key, token string, until time.Time) *Lock {
	return &Lock{l: l, key: key, token: token, until: until}
}

// Key returns the locked key.
func (lk *Lock) Key() string { return lk.key }

// Token returns the random value that identifies this acquisition on the
// masters.
func (lk *Lock) Token() string { return lk.token }

// Until returns the end of the lock's guaranteed validity, on the Locker's
// clock: start + ttl - elapsed - drift of the acquisition or of the latest
// successful Extend. Act on the protected resource only before it.
func (lk *Lock) Until() time.Time {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.until
}

// Extend sets the lock's TTL on the masters to ttl, counted from now, with
// compare-and-PEXPIRE: only masters that still hold our token are extended,
// and an expired key is never re-created. It succeeds when a quorum extended
// it in time; Until then moves to start + ttl - elapsed - drift. If the
// lock's validity has already passed, Extend sends nothing and returns an
// error matching ErrLockLost; so does a failed extension (a *QuorumError),
// after which the lock stays valid until the Until it had.
func (lk *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	l := lk.l
	if err := l.checkCall(ctx, lk.key, ttl); err != nil {
		return err
	}
	start := l.clock.Now()
	lk.mu.Lock()
	until, released := lk.until, lk.released
	lk.mu.Unlock()
	if released {
		return fmt.Errorf("redlock: extend %q: unlocked already: %w", lk.key, ErrLockLost)
	}
	if !start.Before(until) {
		return fmt.Errorf("redlock: extend %q: validity passed at %v: %w", lk.key, until, ErrLockLost)
	}
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond
	res, err := l.fanOut(ctx, extendScript, lk.key, lk.token, ms)
	validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)
	if err == nil && res.OK() && validity > 0 {
		lk.mu.Lock()
		lk.until = start.Add(validity)
		lk.mu.Unlock()
		return nil
	}
	qerr := l.quorumError(opExtend, lk.key, res, err)
	qerr.Late = err == nil && res.OK()
	return qerr
}

// Unlock deletes the lock on every master with compare-and-delete, so a key
// that another client holds by now is left alone. It returns nil when a
// quorum still held our token, and otherwise an error matching ErrLockLost
// (a *QuorumError). It may return once a quorum has answered; the remaining
// deletes still land on every master, whatever happens to ctx.
func (lk *Lock) Unlock(ctx context.Context) error {
	if ctx == nil {
		return invalid("nil context")
	}
	lk.mu.Lock()
	released := lk.released
	lk.mu.Unlock()
	if released {
		return fmt.Errorf("redlock: unlock %q: unlocked already: %w", lk.key, ErrLockLost)
	}
	res, err := lk.l.fanOut(ctx, releaseScript, lk.key, lk.token)
	if err == nil && res.OK() {
		lk.mu.Lock()
		lk.released = true
		lk.mu.Unlock()
		return nil
	}
	return lk.l.quorumError(opUnlock, lk.key, res, err)
}
