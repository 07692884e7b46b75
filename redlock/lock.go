package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// Lock is one acquisition of a key. Its methods are safe for concurrent use.
type Lock struct {
	l          *Locker
	v          *variant
	key, token string
	keys       []string
	ttl        time.Duration
	fence      int64
	acks       *acks         // which masters' acquire calls have returned
	granted    time.Time     // when the Locker returned it, on its clock
	extending  chan struct{} // holds a token while an Extend runs: one at a time (see extend.go); made by the first Extend

	mu       sync.Mutex
	until    time.Time
	released bool
	err      error                                        // why the lock ended; nil while it holds
	done     chan struct{}                                // made on demand, closed when err is set
	expiry   *time.Timer                                  // fires at until, once done or renewal exists
	stop     chan struct{}                                // closed to stop the renewal goroutine
	cancels  map[*context.Context]context.CancelCauseFunc // of Context
	unknown  []map[time.Duration]int                      // per master: TTLs of extends whose outcome there is unknown
}

// init sets up a new lk (a zero Lock).
func (lk *Lock) init(l *Locker, v *variant, key string, keys []string, token string, ttl time.Duration, fence int64, until time.Time, acks *acks) {
	lk.l, lk.v, lk.key, lk.keys, lk.token, lk.ttl, lk.fence, lk.until, lk.acks = l, v, key, keys, token, ttl, fence, until, acks
	lk.granted = l.clock.Now()
}

// errUnlocked ends a lock that its holder released.
var errUnlocked = fmt.Errorf("redlock: unlocked: %w", context.Canceled)

// Key returns the locked key.
func (lk *Lock) Key() string { return lk.key }

// Token returns the random value that identifies this acquisition on the
// masters (for a reentrant lock, the owner).
func (lk *Lock) Token() string { return lk.token }

// Until returns the end of the lock's guaranteed validity, on the Locker's
// clock: start + ttl - elapsed - drift of the acquisition or of the latest
// successful Extend, lowered by any failed or late Extend with a shorter
// TTL (see Extend). It is never later than what a quorum of the masters
// enforces. Act on the protected resource only before it.
func (lk *Lock) Until() time.Time {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return lk.until
}

// Done returns a channel that is closed the moment the lock can no longer be
// guaranteed: its validity passed (Until was not moved by an Extend or a
// renewal in time), a renewal found the lock lost, or it was unlocked. It is
// closed no later than Until. Err then says why.
func (lk *Lock) Done() <-chan struct{} {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	lk.watchLocked()
	return lk.done
}

// Err returns nil while the lock holds, and afterwards why it ended: an
// error matching ErrLockLost, or one matching context.Canceled after Unlock.
func (lk *Lock) Err() error {
	lk.mu.Lock()
	var lost error
	if lk.err == nil && !lk.l.clock.Now().Before(lk.until) {
		lost = lk.validityPassed()
		lk.endLocked(lost)
	}
	err := lk.err
	lk.mu.Unlock()
	lk.lost(lost)
	return err
}

// Context returns a context derived from parent that is cancelled when the
// lock ends (see Done), with context.Cause telling why; and a function that
// releases its resources. Run the protected work with it.
func (lk *Lock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	lk.mu.Lock()
	defer lk.mu.Unlock()
	lk.watchLocked()
	if lk.err != nil {
		cancel(lk.err)
		return ctx, func() {}
	}
	if lk.cancels == nil {
		lk.cancels = make(map[*context.Context]context.CancelCauseFunc)
	}
	lk.cancels[&ctx] = cancel
	return ctx, func() {
		lk.mu.Lock()
		delete(lk.cancels, &ctx)
		lk.mu.Unlock()
		cancel(context.Canceled)
	}
}

// watchLocked makes the done channel and arms the expiry timer.
func (lk *Lock) watchLocked() {
	if lk.done != nil {
		return
	}
	lk.done = make(chan struct{})
	if lk.err != nil {
		close(lk.done)
		return
	}
	lk.expiry = time.AfterFunc(lk.untilDelayLocked(), lk.checkExpiry)
}

// untilDelayLocked is the real time left until Until.
func (lk *Lock) untilDelayLocked() time.Duration {
	return lk.until.Sub(lk.l.clock.Now())
}

// checkExpiry runs when the expiry timer fires: it ends the lock if Until
// has passed, and re-arms the timer if an Extend moved Until meanwhile.
func (lk *Lock) checkExpiry() {
	lk.mu.Lock()
	if lk.err != nil {
		lk.mu.Unlock()
		return
	}
	if d := lk.untilDelayLocked(); d > 0 {
		lk.expiry.Reset(d)
		lk.mu.Unlock()
		return
	}
	lost := lk.validityPassed()
	lk.endLocked(lost)
	lk.mu.Unlock()
	lk.lost(lost)
}

func (lk *Lock) validityPassed() error {
	return fmt.Errorf("redlock: %q: validity passed: %w", lk.key, ErrLockLost)
}

// endLocked records why the lock ended, closes done and stops the timer and
// the renewal. The first reason wins: it reports whether err was that.
// Tell the Observer (lk.lost) after unlocking lk.mu.
func (lk *Lock) endLocked(err error) bool {
	if lk.err != nil {
		return false
	}
	lk.err = err
	if lk.done != nil {
		close(lk.done)
	}
	if lk.expiry != nil {
		lk.expiry.Stop()
	}
	if lk.stop != nil {
		close(lk.stop)
	}
	for _, cancel := range lk.cancels {
		cancel(err)
	}
	lk.cancels = nil
	return true
}

// Unlock releases the lock on every master with compare-and-delete, so a
// key that another client holds by now is left alone, and stops a renewal.
// It returns nil when a quorum still held our token, and otherwise an error
// matching ErrLockLost (a *QuorumError). The releases are always sent, each
// bounded by the node timeout and each after that master's acquire call
// returned, whatever happens to ctx: an ended ctx only makes Unlock return
// early, with an error that also matches ctx.Err(), while the deletes still
// land. It may return once a quorum has answered.
func (lk *Lock) Unlock(ctx context.Context) (err error) {
	if o := lk.l.observer; o != nil {
		held := lk.l.clock.Now().Sub(lk.granted)
		defer func() { o.Release(ReleaseEvent{Key: lk.key, Kind: lk.v.kind, Held: held, Err: err}) }()
	}
	if ctx == nil {
		return invalid("nil context")
	}
	lk.mu.Lock()
	released := lk.released
	lk.released = true
	var lost error // the validity passed unnoticed: tell the Observer
	if lk.l.observer != nil && lk.err == nil && !lk.l.clock.Now().Before(lk.until) {
		lost = lk.validityPassed()
	}
	lk.endLocked(errUnlocked)
	lk.mu.Unlock()
	lk.lost(lost)
	if released {
		return fmt.Errorf("redlock: unlock %q: unlocked already: %w", lk.key, ErrLockLost)
	}
	type outcome struct {
		res *quorum.Result
		err error
	}
	release := func(ctx context.Context) outcome {
		res, err := lk.l.fanOut(ctx, opUnlock, lk.acks, lk.v.keepUncertain, lk.v.release, lk.keys, nil, lk.v.releaseArgs(ReleaseChannel(lk.key), lk.token)...)
		return outcome{res, err}
	}
	if ctx.Err() == nil {
		// The common case, on the caller's goroutine: the fan-out sends
		// every release (or queues it behind its acquire) before it
		// waits, so a ctx that ends while it waits only makes it return
		// early, and the releases still land. A nil res means that ctx
		// ended before anything was sent: then as below.
		if o := release(ctx); o.res != nil {
			lk.l.queues.released(lk.key)
			switch {
			case o.err != nil:
				return lk.l.quorumError(opUnlock, lk.key, nil, o.err)
			case o.res.OK():
				return nil
			}
			return lk.l.quorumError(opUnlock, lk.key, o.res, nil)
		}
	}
	// ctx has ended: the releases go out all the same, and Unlock returns.
	done := make(chan outcome, 1)
	go func() {
		o := release(context.WithoutCancel(ctx))
		lk.l.queues.released(lk.key)
		done <- o
	}()
	select {
	case o := <-done:
		if o.err == nil && o.res.OK() {
			return nil
		}
		return lk.l.quorumError(opUnlock, lk.key, o.res, o.err)
	case <-ctx.Done():
		return lk.l.quorumError(opUnlock, lk.key, nil, ctx.Err())
	}
}
