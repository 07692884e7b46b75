package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Lock is one acquisition of a key. Its methods are safe for concurrent use.
type Lock struct {
	l *Locker
	v *variant
	// token is the acquisition's identity on the masters: the attempt's
	// random token, or a reentrant hold's id.
	key, token string
	keys       []string
	head       []any // the calls' shared arguments (call.head), boxed once
	ttl        time.Duration
	fence      int64
	granted    time.Time       // when the Locker returned it, on its clock
	ctx        context.Context // the acquisition call's, without its cancellation, for an Observer's events; nil without one
	extending  chan struct{}   // holds a token while an Extend runs: one at a time (see extend.go); made by the first Extend

	mu       sync.Mutex
	until    time.Time
	released bool
	err      error                                        // why the lock ended; nil while it holds
	done     chan struct{}                                // made on demand, closed when err is set
	expiry   *time.Timer                                  // fires at until, once done or renewal exists
	stop     chan struct{}                                // closed to stop the renewal goroutine
	stopped  bool                                         // stop is closed
	cancels  map[*context.Context]context.CancelCauseFunc // of Context
	metadata map[string]string                            // the holder record's fields (WithMetadata, SetMetadata)
	longest  time.Duration                                // the longest TTL an Extend sent: the release is retried, and its tombstone lives, that long
	unknown  []map[time.Duration]int                      // per master: TTLs of extends whose outcome there is unknown
}

// newLock returns the Lock of an acquisition of key (whose keys are keys)
// with token, valid until until.
func newLock(l *Locker, v *variant, key string, keys []string, head []any, token string, ttl time.Duration, fence int64, until time.Time) *Lock {
	return &Lock{l: l, v: v, key: key, keys: keys, head: head, token: token, ttl: ttl, fence: fence, until: until, granted: l.clock.Now()}
}

// errUnlocked ends a lock that its holder released.
var errUnlocked = fmt.Errorf("redlock: unlocked: %w", context.Canceled)

// Key returns the locked key.
func (lk *Lock) Key() string { return lk.key }

// Token returns the random value that identifies this acquisition on the
// masters (for a reentrant lock, the owner).
func (lk *Lock) Token() string {
	if lk.v.owner != "" {
		return lk.v.owner
	}
	return lk.token
}

// Until returns the end of the lock's guaranteed validity, on the Locker's
// clock: start + ttl - drift of the acquisition or of the latest successful
// Extend (start: when its round began), lowered by any failed or late
// Extend with a shorter TTL (see Extend). It is never later than what a quorum of the masters
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
	lk.stopRenewalLocked()
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
// bounded by the node timeout, whatever happens to ctx: an ended ctx only
// makes Unlock return early, with an error that also matches ctx.Err(),
// while the deletes still land. It may return once a quorum has answered.
// A release that reaches a master before the acquire it follows leaves a
// tombstone there that refuses that acquire (see variant.go), so an early
// Unlock cannot leave a key behind on a slow master. A nil ctx is taken
// for context.Background(): the lock is released (and its renewal
// stopped) all the same.
func (lk *Lock) Unlock(ctx context.Context) (err error) {
	if o := lk.l.observer; o != nil {
		held := lk.l.clock.Now().Sub(lk.granted)
		defer func() { o.Release(ReleaseEvent{Key: lk.key, Kind: lk.v.kind, Held: held, Err: err, ctx: detach(ctx)}) }()
	}
	if ctx == nil {
		ctx = context.Background()
	}
	lk.mu.Lock()
	released := lk.released
	lk.released = true
	longest := max(lk.ttl, lk.longest) // the longest the key may live on a master
	var lost error                     // the validity passed unnoticed: tell the Observer
	if lk.l.observer != nil && lk.err == nil && !lk.l.clock.Now().Before(lk.until) {
		lost = lk.validityPassed()
	}
	lk.endLocked(errUnlocked)
	lk.mu.Unlock()
	lk.lost(lost)
	if released {
		return fmt.Errorf("redlock: unlock %q: unlocked already: %w", lk.key, ErrLockLost)
	}
	l := lk.l
	rkey := l.prefix + lk.key // its name on the masters
	release := l.releaseCall(opUnlock, lk.v, lk.v.release, lk.head, ReleaseChannel(rkey), longest)
	res, err := l.fanOut(ctx, release) // sent whatever ctx does
	l.queues.released(rkey)
	switch {
	case err != nil:
		return l.quorumError(opUnlock, lk.key, nil, err)
	case res.OK():
		return nil
	}
	return l.quorumError(opUnlock, lk.key, res, nil)
}
