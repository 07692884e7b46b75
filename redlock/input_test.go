package redlock_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Bad input gets a clear error matching ErrInvalid and sends nothing.
func TestBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	good := asNodes(sp)
	var nilPool *pool.Node
	dup := append(asNodes(sp[:2]), &spy{Node: nodes[0]})

	for _, tt := range []struct {
		name  string
		nodes []redlock.Node
		cfg   redlock.Config
	}{
		{"no nodes", nil, redlock.Config{}},
		{"nil node", []redlock.Node{sp[0], nil, sp[2]}, redlock.Config{}},
		{"typed nil node", []redlock.Node{sp[0], nilPool, sp[2]}, redlock.Config{}},
		{"duplicate address", dup, redlock.Config{}},
		{"quorum of half", good, redlock.Config{Quorum: 1}},
		{"quorum above N", good, redlock.Config{Quorum: 4}},
		{"negative quorum", good, redlock.Config{Quorum: -1}},
		{"negative drift factor", good, redlock.Config{DriftFactor: -0.1}},
		{"drift factor 1", good, redlock.Config{DriftFactor: 1}},
		{"drift factor NaN", good, redlock.Config{DriftFactor: math.NaN()}},
		{"negative node timeout", good, redlock.Config{NodeTimeout: -time.Second}},
		{"renew fraction 1", good, redlock.Config{RenewFraction: 1}},
		{"negative renew fraction", good, redlock.Config{RenewFraction: -0.5}},
		{"nil RetryFunc", good, redlock.Config{Retry: redlock.RetryFunc(nil)}},
		{"typed nil retry", good, redlock.Config{Retry: (*redlock.ExponentialBackoff)(nil)}},
		{"typed nil clock", good, redlock.Config{Clock: (*clock.Skewed)(nil)}},
		{"key prefix with a stray '}'", good, redlock.Config{KeyPrefix: "locks}:"}},
		{"key prefix with an empty hash tag", good, redlock.Config{KeyPrefix: "{}:"}},
		{"key prefix too long", good, redlock.Config{KeyPrefix: strings.Repeat("p", redlock.MaxKeyLen)}},
		{"pool node without an address", []redlock.Node{sp[0], pool.New(pool.Config{}), sp[2]}, redlock.Config{}},
		{"node without identity, guard on", []redlock.Node{fakeNode{}}, redlock.Config{}},
		{"node without confirmations, durability", []redlock.Node{fakeNode{}}, redlock.Config{RestartGuard: -1, Durability: redlock.Durability{Replicas: 1}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := redlock.New(tt.nodes, tt.cfg); !errors.Is(err, redlock.ErrInvalid) {
				t.Fatalf("New = %v, want ErrInvalid", err)
			}
		})
	}
	for _, q := range []int{2, 3} {
		if _, err := redlock.New(good, redlock.Config{Quorum: q}); err != nil {
			t.Fatalf("quorum %d of 3 rejected: %v", q, err)
		}
	}
	// A Node that cannot report its master's identity is refused only
	// while the restart guard needs it, and the error says what to do.
	if _, err := redlock.New([]redlock.Node{fakeNode{}}, redlock.Config{}); err == nil || !strings.Contains(err.Error(), "Abilities.Identity") || !strings.Contains(err.Error(), "RestartGuard < 0") {
		t.Errorf("New over a Node without identity: %v, want an error naming the ability and the way out", err)
	}
	for _, cfg := range []redlock.Config{{RestartGuard: -1}, {FsyncAlways: true}} {
		if _, err := redlock.New([]redlock.Node{fakeNode{}}, cfg); err != nil {
			t.Errorf("New over a Node without identity, guard off (%+v): %v", cfg, err)
		}
	}
	for _, prefix := range []string{"locks:", "{locks}:", "{app}x}:"} {
		if _, err := redlock.New(good, redlock.Config{KeyPrefix: prefix}); err != nil {
			t.Errorf("key prefix %q refused: %v", prefix, err)
		}
	}

	l := newLocker(t, good, redlock.Config{})
	fast := newLocker(t, good, redlock.Config{NodeTimeout: time.Millisecond})
	held, err := l.TryLock(t.Context(), "held", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	landedEverywhere(t, nodes, "held") // before counting what bad input sends
	before := totalCalls(sp)
	var nilCtx context.Context
	calls := []struct {
		name string
		call func() error
	}{
		{"empty key", func() error { _, err := l.TryLock(t.Context(), "", time.Second); return err }},
		{"empty key, Lock", func() error { _, err := l.Lock(t.Context(), "", time.Second); return err }},
		{"zero ttl", func() error { _, err := l.TryLock(t.Context(), "k", 0); return err }},
		{"negative ttl", func() error { _, err := l.Lock(t.Context(), "k", -time.Second); return err }},
		{"ttl below 1ms", func() error { _, err := l.TryLock(t.Context(), "k", time.Microsecond); return err }},
		{"ttl within drift", func() error { _, err := l.TryLock(t.Context(), "k", 2*time.Millisecond); return err }},
		{"ttl within node timeout", func() error { _, err := l.TryLock(t.Context(), "k", 40*time.Millisecond); return err }},
		{"ttl within drift once cut to ms", func() error { _, err := fast.TryLock(t.Context(), "k", 2900*time.Microsecond); return err }},
		{"Reentrant ttl within drift once cut to ms", func() error {
			_, err := fast.Reentrant("k", "o").TryLock(t.Context(), 2900*time.Microsecond)
			return err
		}},
		{"nil ctx", func() error { _, err := l.TryLock(nilCtx, "k", time.Second); return err }},
		{"nil ctx, Lock", func() error { _, err := l.Lock(nilCtx, "k", time.Second); return err }},
		{"Extend nil ctx", func() error { return held.Extend(nilCtx, time.Second) }},
		{"Extend zero ttl", func() error { return held.Extend(t.Context(), 0) }},
		{"Do nil fn", func() error { return l.Do(t.Context(), "k", time.Second, nil) }},
		{"Do empty key", func() error { return l.Do(t.Context(), "", time.Second, func(context.Context) error { return nil }) }},
		{"RLock empty key", func() error { _, err := l.RWMutex("").RLock(t.Context(), time.Second); return err }},
		{"RW Lock bad ttl", func() error { _, err := l.RWMutex("k").TryLock(t.Context(), 0); return err }},
		{"key too long", func() error {
			_, err := l.TryLock(t.Context(), strings.Repeat("k", redlock.MaxKeyLen+1), time.Second)
			return err
		}},
		{"multi-key lock with a key too long", func() error {
			_, err := l.TryLockMulti(t.Context(), []string{"a", strings.Repeat("k", redlock.MaxKeyLen+1)}, time.Second)
			return err
		}},
		{"Check on a Locker not made by New", func() error { _, err := new(redlock.Locker).Check(t.Context()); return err }},
		{"TryLock on a Locker not made by New", func() error { _, err := new(redlock.Locker).TryLock(t.Context(), "k", time.Second); return err }},
		{"Close on a Locker not made by New", func() error { return new(redlock.Locker).Close(t.Context()) }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got := totalCalls(sp) - before; got != 0 {
		t.Fatalf("bad input sent %d commands to Redis", got)
	}
}
