package redlock

import (
	"cmp"
	"context"
	"time"
)

// acquire checks its input, then makes attempts of v until one succeeds, or
// only one when retry is false. Config.Observer hears of every call.
func (l *Locker) acquire(ctx context.Context, cc *callConfig, v *variant, key string, ttl time.Duration, retry bool) (lk *Lock, err error) {
	attempts := 0
	if l.observer != nil {
		start := l.clock.Now()
		defer func() {
			l.observer.Acquire(AcquireEvent{Key: key, Kind: v.kind, Wait: l.clock.Now().Sub(start), Attempts: attempts, Err: err, ctx: detach(ctx)})
		}()
	}
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	if l.closed.Load() {
		return nil, l.quorumError(opLock, key, nil, ErrClosed)
	}
	// The Lock call's waiting and its key share one allocation.
	first := &struct {
		w   waiting
		key [1]string
	}{}
	rkey := l.prefix + key // the lock's name on the masters
	var keys []string
	if v.oneKey {
		first.key[0] = rkey
		keys = first.key[:]
	} else {
		keys = v.keys(rkey)
	}
	if !v.explicit {
		if err := checkDerivable(rkey); err != nil {
			return nil, err
		}
	}
	w := &first.w
	l.initWaiting(w, rkey, retry && !v.unqueued, cc.retry)
	defer w.close()
	if err := w.start(ctx); err != nil {
		return nil, l.quorumError(opLock, key, nil, err)
	}
	var token string          // the last attempt's
	var answered *QuorumError // the error of the last attempt some master answered
	attempts = l.attempts(ctx, cc, w, retry, func(n int) bool {
		if cerr := ctx.Err(); cerr != nil { // send nothing; err stays the last attempt's
			if err == nil {
				err = l.quorumError(opLock, key, nil, cerr)
			}
			return false
		}
		// Fresh per attempt: a late release of one never hits the next.
		next, terr := cc.newToken(n, token)
		if terr != nil {
			err = terr
			return true // no more attempts: err says why
		}
		token = next
		var cleaned <-chan struct{}
		lk, cleaned, err = l.attempt(ctx, v, key, keys, token, ttl)
		if err == nil {
			return true
		}
		if qerr, ok := err.(*QuorumError); ok && qerr.Granted+qerr.Refused+qerr.Failed > 0 {
			answered = qerr
		}
		if retry {
			l.awaitCleanup(ctx, cleaned)
		}
		return false
	})
	if err == nil {
		l.granted(ctx, lk, cc)
		return lk, nil
	}
	if token != "" { // some attempt went out
		l.giveUp(ctx, v, rkey, keys, token, ttl)
	}
	if qerr, ok := err.(*QuorumError); ok && qerr.Granted+qerr.Refused+qerr.Failed == 0 && answered != nil {
		// The last attempt was cut short before any master answered: the
		// one before tells more (who refused, who failed, and why).
		answered.Cause, answered.Pending = cmp.Or(qerr.Cause, answered.Cause), 0
		err = answered
	}
	if qerr, ok := err.(*QuorumError); ok && retry && qerr.Cause == nil {
		qerr.Cause = ctx.Err()
	}
	return nil, err
}

// detach is ctx without its cancellation, for an Observer's events; nil for
// nil (bad input).
func detach(ctx context.Context) context.Context {
	if ctx == nil {
		return nil
	}
	return context.WithoutCancel(ctx)
}

// attempts is the one retry loop of every acquisition: it calls try(n) for
// n = 1, 2, ... until try reports that it is done (a success, or a failure
// that no attempt can mend, which try keeps), or only once when retry is
// false, or cc's WithMaxAttempts times, waiting between attempts as w says
// (w.next, until ctx ends). It returns the number of attempts made.
func (l *Locker) attempts(ctx context.Context, cc *callConfig, w *waiting, retry bool, try func(n int) (done bool)) int {
	for n := 1; ; n++ {
		if try(n) || !retry || !cc.more(n) || !w.next(ctx, n) {
			return n
		}
	}
}

// awaitCleanup waits until a failed attempt's releases returned (cleaned
// closes), for at most a node timeout, or until ctx ends. The next attempt
// of the same Lock call goes out after it: sent earlier, it would find this
// attempt's keys, not yet released, and count them as refusals; and since
// a failed attempt's release announces nothing, a waiter woken by the
// release it waited for could then fail and sleep through its whole
// backoff, the masters free by then.
func (l *Locker) awaitCleanup(ctx context.Context, cleaned <-chan struct{}) {
	if cleaned == nil {
		return
	}
	t := time.NewTimer(l.nodeTimeout)
	defer t.Stop()
	select {
	case <-cleaned:
	case <-t.C:
	case <-ctx.Done():
	}
}

// granted starts what a new lock needs: its renewal with Config.AutoRenew,
// and with an Observer its expiry timer, so that a loss is told even when
// nobody watches Done, and the context its later events carry (that of the
// acquisition call ctx, without its cancellation).
func (l *Locker) granted(ctx context.Context, lk *Lock, cc *callConfig) {
	lk.metadata = cc.metadata // before anyone else sees lk
	if l.observer != nil {
		lk.ctx = detach(ctx)
		lk.mu.Lock()
		lk.watchLocked()
		lk.mu.Unlock()
	}
	if cc.autoRenew {
		lk.startRenewal()
	}
}
