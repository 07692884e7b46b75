package redlock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// startRenewal starts the watchdog: it extends the lock by its TTL each
// time the validity left (Until - now) falls to the TTL less
// RenewFraction of it (two thirds of the TTL by default), until Unlock or
// until the lock is lost. It is timed from Until, not from when the last
// round returned: a round that took most of the TTL (slow links, a
// durable confirmation that waits for an fsync) leaves less than a full
// period before Until, and the next renewal goes out at once. A
// renewal that fails for want of answers is retried while the lock is still
// valid; one that a quorum refuses (our token is gone) ends the lock at once.
// Either way Done closes no later than Until.
func (lk *Lock) startRenewal() {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if lk.stop != nil || lk.err != nil {
		return
	}
	lk.watchLocked()
	lk.stop = make(chan struct{})
	lk.l.renewing.Store(lk, struct{}{})
	every := time.Duration(float64(lk.ttl) * lk.l.renewFraction)
	go lk.renew(lk.stop, every)
}

// stopRenewal stops the watchdog (Locker.Close): the lock then ends at its
// Until, unless an Extend moves it.
func (lk *Lock) stopRenewal() {
	lk.mu.Lock()
	lk.stopRenewalLocked()
	lk.mu.Unlock()
}

// stopRenewalLocked stops the watchdog, if it runs.
func (lk *Lock) stopRenewalLocked() {
	if lk.stop != nil && !lk.stopped {
		lk.stopped = true
		close(lk.stop)
		lk.l.renewing.Delete(lk)
	}
}

func (lk *Lock) renew(stop <-chan struct{}, every time.Duration) {
	timer := time.NewTimer(lk.renewDelay(every))
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C:
		}
		err := lk.extend(context.Background(), lk.ttl, true)
		var qerr *QuorumError
		switch {
		case err == nil:
			timer.Reset(lk.renewDelay(every))
		case errors.As(err, &qerr) && qerr.Refused > qerr.Nodes-qerr.Quorum:
			// A quorum no longer holds our token: lost for good.
			lost := fmt.Errorf("redlock: renew %q: %w", lk.key, err)
			lk.mu.Lock()
			ended := lk.endLocked(lost)
			lk.mu.Unlock()
			if ended {
				lk.lost(lost)
			}
			return
		default:
			// Too few answers: try again soon; the expiry timer ends
			// the lock at Until if no renewal gets through by then.
			timer.Reset(max(every/8, time.Millisecond))
		}
	}
}

// renewDelay is how long the watchdog waits for the next renewal: until
// the validity left falls to the TTL less every, or not at all when it
// has already.
func (lk *Lock) renewDelay(every time.Duration) time.Duration {
	lk.mu.Lock()
	left := lk.until.Sub(lk.l.clock.Now())
	lk.mu.Unlock()
	return max(left-(lk.ttl-every), 0)
}
