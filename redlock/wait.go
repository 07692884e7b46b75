package redlock

import (
	"context"
	"sync"
	"time"
)

// notifier is implemented by nodes that can announce a lock's release to
// waiters (*pool.Node does, over a shared pub/sub connection). ch receives
// a non-blocking send for every message published on channel.
type notifier interface {
	Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error)
}

// waiter is a Lock call between attempts: it wakes on the retry backoff or
// on a release announced by any master, whichever comes first. Polling stays
// as the fallback for announcements that get lost.
type waiter struct {
	wake   chan struct{}   // nil: poll only
	kick   <-chan struct{} // a release by this process (see queues)
	unsubs []func()
	timer  *time.Timer
}

// newWaiter subscribes to key's release channel on every master that can
// announce it, each bounded by the node timeout. It returns nil when no
// master could be subscribed.
func (l *Locker) newWaiter(ctx context.Context, key string) *waiter {
	w := &waiter{wake: make(chan struct{}, 1)}
	sctx, cancel := context.WithTimeout(ctx, l.nodeTimeout)
	defer cancel()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	channel := ReleaseChannel(key)
	for _, n := range l.nodes {
		sub, ok := n.(notifier)
		if !ok {
			continue
		}
		wg.Go(func() {
			unsub, err := sub.Subscribe(sctx, channel, w.wake)
			if err != nil {
				return
			}
			mu.Lock()
			w.unsubs = append(w.unsubs, unsub)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(w.unsubs) == 0 {
		return nil
	}
	return w
}

// wait blocks for d, or until a release is announced (or made by this
// process), or until ctx ends;
// it reports whether to try again (false when ctx ended).
func (w *waiter) wait(ctx context.Context, d time.Duration) bool {
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

// close unsubscribes and stops the timer; it is a no-op on a nil waiter.
func (w *waiter) close() {
	if w == nil {
		return
	}
	for _, unsub := range w.unsubs {
		unsub()
	}
	if w.timer != nil {
		w.timer.Stop()
	}
}
