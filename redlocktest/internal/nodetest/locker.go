package nodetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// testLocker: a redlock.Locker over three of the Nodes locks, excludes,
// extends and unlocks, and, when the Nodes are Subscribers, a waiter in
// another Locker (as in another process) wakes on the release announced by
// the masters: its backoff is an hour, so nothing else could wake it.
func (s *suite) testLocker(t *testing.T) {
	nodes := func() []redlock.Node {
		ns := make([]redlock.Node, len(s.masters))
		for i := range ns {
			ns[i] = s.node(t, i)
		}
		return ns
	}
	controls := make([]*control, len(s.masters))
	for i := range controls {
		controls[i] = s.control(t, i)
	}
	wakes := redlock.AbilitiesOf(s.node(t, 0)).Subscribe != nil
	retry := redlock.RetryFunc(func(int) time.Duration { return time.Hour })
	if !wakes {
		t.Log("the Node has no Abilities.Subscribe: the waiter polls")
		retry = func(int) time.Duration { return 10 * time.Millisecond }
	}
	cfg := s.config(redlock.Config{NodeTimeout: 500 * time.Millisecond})
	holder, err := redlock.New(nodes(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Retry = retry
	waiter, err := redlock.New(nodes(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := key(t)
	const ttl = 10 * time.Second

	lk, err := holder.TryLock(ctx(t), k, ttl)
	if err != nil {
		t.Fatalf("TryLock: %v", err)
	}
	// A Locker may return at quorum, before the last master answered.
	quorum := holder.Quorum()
	if n := s.count(controls, func(c *control) bool { return c.str("GET", k) == lk.Token() }); n < quorum {
		t.Errorf("%d masters hold the lock's token, want at least %d", n, quorum)
	}
	if other, err := waiter.TryLock(ctx(t), k, ttl); !errors.Is(err, redlock.ErrNotAcquired) {
		if err == nil {
			other.Unlock(context.Background())
		}
		t.Fatalf("a second TryLock while held: err = %v, want ErrNotAcquired", err)
	}

	before := lk.Until()
	if err := lk.Extend(ctx(t), 3*ttl); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if !lk.Until().After(before) {
		t.Errorf("Until %v did not move past %v after Extend", lk.Until(), before)
	}
	if n := s.count(controls, func(c *control) bool { return c.int("PTTL", k) > int64(ttl/time.Millisecond) }); n < quorum {
		t.Errorf("%d masters have a PTTL above %v after Extend to %v, want at least %d", n, ttl, 3*ttl, quorum)
	}

	type result struct {
		lk  *redlock.Lock
		err error
	}
	got := make(chan result, 1)
	wctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	go func() {
		l, err := waiter.Lock(wctx, k, ttl)
		got <- result{l, err}
	}()
	if wakes {
		for _, c := range controls {
			eventually(t, "the waiter subscribes on every master", func() bool {
				return c.numsub(redlock.ReleaseChannel(k)) > 0
			})
		}
	}
	if err := lk.Unlock(ctx(t)); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	var r result
	select {
	case r = <-got:
	case <-time.After(patience):
		t.Fatalf("the waiter did not get the lock within %v of the release", patience)
	}
	if r.err != nil {
		t.Fatalf("the waiter: %v; the holder's token %s; now %s", r.err, lk.Token(), s.describe(controls, k, redlock.ReleaseChannel(k)))
	}
	if r.lk.Token() == lk.Token() {
		t.Error("the waiter's lock has the first holder's token")
	}
	if n := s.count(controls, func(c *control) bool { return c.str("GET", k) == r.lk.Token() }); n < quorum {
		t.Errorf("%d masters hold the waiter's token, want at least %d", n, quorum)
	}
	if err := r.lk.Unlock(ctx(t)); err != nil {
		t.Fatalf("the waiter's Unlock: %v", err)
	}
	// Unlock may return at quorum; the other deletes still land.
	eventually(t, "every master forgets the key after Unlock", func() bool {
		return s.count(controls, func(c *control) bool { return c.int("EXISTS", k) == 0 }) == len(controls)
	})
}

// describe says, for a failure's message, what each master holds under k
// (the token, and its PTTL) and how many subscribers channel has there:
// enough to tell a release that did not land from a wake-up that got lost.
func (s *suite) describe(cs []*control, k, channel string) string {
	var b strings.Builder
	for i, c := range cs {
		fmt.Fprintf(&b, "master %d: %s=%q pttl %d, %d subscribed; ", i, k, c.str("GET", k), c.int("PTTL", k), c.numsub(channel))
	}
	return b.String()
}

// count is how many of cs satisfy f.
func (s *suite) count(cs []*control, f func(*control) bool) int {
	n := 0
	for _, c := range cs {
		if f(c) {
			n++
		}
	}
	return n
}
