package redlock

import (
	"context"
	"time"
)

// Observe delivers the election's leaders as they change, in term order:
// every new term, and a new value proclaimed in the same term (a higher
// Rev), each once; never an older term, or an older revision, after a
// newer one. Create the observing Election with the candidates' ttl: its
// reads are paced by it. It reads the leader from a
// quorum (Leader) at once, whenever a master announces a release or a
// proclaim (over pub/sub, through every Node that can subscribe), and at
// least every quarter of the election's ttl (at most a second, at least
// 10 ms), so that no leader who holds for longer than that is missed,
// also while a subscription is lost or reconnecting. A leader whose whole
// term falls between two reads is not seen, and a read that fails (too
// few masters answered) or finds no leader delivers nothing. A new leader
// or value may be delivered before the Campaign or Proclaim that made it
// has returned to its caller. The channel is unbuffered, and no read is
// made while a delivery waits for its receiver: a slow receiver sees the
// leader as it is when it receives again, not every change meanwhile. It
// closes when ctx ends.
func (e *Election) Observe(ctx context.Context) <-chan Leader {
	ch := make(chan Leader)
	go e.observe(ctx, ch)
	return ch
}

// observePoll is the longest an observer of an election with ttl goes
// without reading its leader.
func observePoll(ttl time.Duration) time.Duration {
	return min(max(ttl/4, 10*time.Millisecond), time.Second)
}

func (e *Election) observe(ctx context.Context, ch chan<- Leader) {
	defer close(ch)
	rkey := e.l.prefix + e.name
	wake := make(chan struct{}, 1)
	var unsubs []func()
	defer func() {
		for _, unsub := range unsubs {
			unsub()
		}
	}()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var last Leader
	for {
		if len(unsubs) == 0 { // subscribed before the read: a change after it wakes us
			unsubs = e.l.subscribe(ctx, wake, ReleaseChannel(rkey), ChangeChannel(rkey))
		}
		if ldr, err := e.Leader(ctx); err == nil && (ldr.Term > last.Term || ldr.Term == last.Term && ldr.Rev > last.Rev) {
			select {
			case ch <- ldr:
				last = ldr
			case <-ctx.Done():
				return
			}
		}
		timer.Reset(observePoll(e.ttl))
		select {
		case <-wake:
		case <-timer.C:
		case <-ctx.Done():
			return
		}
	}
}
