package redlock

import (
	"context"
	"sync"
	"time"
)

// waiting is one Lock call between its attempts. It is the one place where
// a Lock call waits, for whichever of these comes first:
//
//   - its turn among this process's Lock calls for the key (the Locker's
//     per-key queue, first come first served; see queue.go), which it
//     joins after its first failed attempt, or at once when others here
//     wait already;
//   - a release announced by a master (wake on release) on the key's
//     ReleaseChannel, through every Node that is a Subscriber; it
//     subscribes after its first failed attempt as the head, and then
//     tries once more at once, since a release before the subscription was
//     not announced to it;
//   - an Unlock of the key through the same Locker (the queue's kick);
//   - the Config.Retry backoff, the fallback for announcements that got
//     lost and for nodes that cannot announce.
type waiting struct {
	l      *Locker
	key    string
	queued bool          // take part in the Locker's per-key queue (queue.go)
	retry  RetryStrategy // the backoff between attempts

	turn   *ticket         // our place in key's queue; nil until joined
	kick   <-chan struct{} // an Unlock of key by this process; nil until joined
	tried  bool            // subscribing was tried (or is off)
	wake   chan struct{}   // a release announced by a master; nil: none subscribed
	unsubs []func()
	timer  *time.Timer
}

// initWaiting sets up w as the waiting of a Lock call for key, with retry's
// backoff; queued puts it in the Locker's per-key queue.
func (l *Locker) initWaiting(w *waiting, key string, queued bool, retry RetryStrategy) {
	*w = waiting{l: l, key: key, queued: queued, retry: retry, tried: l.noWake}
}

// start runs before the first attempt: when other Lock calls here wait for
// the key already, it queues up behind them instead of barging ahead, and
// returns at its turn or with ctx's error.
func (w *waiting) start(ctx context.Context) error {
	if !w.queued || !w.l.queues.busy(w.key) {
		return nil
	}
	w.join()
	return w.turn.wait(ctx)
}

// next runs after failed attempt number attempt and reports whether to try
// again: false once ctx has ended.
func (w *waiting) next(ctx context.Context, attempt int) bool {
	if ctx.Err() != nil {
		return false
	}
	switch {
	case w.queued && w.turn == nil:
		w.join()
		return w.turn.wait(ctx) == nil // our turn: try at once
	case !w.tried:
		w.tried = true
		if w.subscribe(ctx) {
			return true // try once more at once
		}
	}
	return w.sleep(ctx, w.retry.Backoff(attempt))
}

// join adds the call to the tail of key's queue.
func (w *waiting) join() {
	w.turn, w.kick = w.l.queues.join(w.key)
}

// subscribe subscribes to key's release channel on every master that can
// announce it, each bounded by the node timeout. It reports whether any
// master could be subscribed.
func (w *waiting) subscribe(ctx context.Context) bool {
	wake := make(chan struct{}, 1)
	w.unsubs = w.l.subscribe(ctx, wake, ReleaseChannel(w.key))
	if len(w.unsubs) == 0 {
		return false
	}
	w.wake = wake
	return true
}

// subscribe subscribes wake to channels on every master that can
// announce them, each bounded by the node timeout, and returns the
// unsubscribe functions of those that could be subscribed.
func (l *Locker) subscribe(ctx context.Context, wake chan<- struct{}, channels ...string) []func() {
	sctx, cancel := context.WithTimeout(ctx, l.nodeTimeout)
	defer cancel()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		unsubs []func()
	)
	for _, m := range l.masters {
		sub := m.ab.Subscribe
		if sub == nil {
			continue
		}
		for _, channel := range channels {
			wg.Go(func() {
				unsub, err := sub(sctx, channel, wake)
				if err != nil {
					return
				}
				mu.Lock()
				unsubs = append(unsubs, unsub)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return unsubs
}

// sleep blocks for d, or until a release is announced or made by this
// process, or until ctx ends; it reports whether to try again (false when
// ctx ended).
func (w *waiting) sleep(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return false
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.timer.C:
		return true
	case <-w.wake:
		return true
	case <-w.kick:
		return true
	case <-ctx.Done():
		return false
	}
}

// close unsubscribes, stops the timer and leaves key's queue, handing the
// turn to the next call there.
func (w *waiting) close() {
	for _, unsub := range w.unsubs {
		unsub()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.turn != nil {
		w.l.queues.leave(w.key, w.turn)
	}
}
