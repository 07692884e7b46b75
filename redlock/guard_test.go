package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// guardCluster starts n masters with opts and a pool.Node for each.
func guardCluster(t *testing.T, n int, opts redisproc.Options) ([]*redisproc.Server, []*pool.Node) {
	t.Helper()
	servers := redistest.Start(t, n, opts)
	nodes := make([]*pool.Node, n)
	for i, s := range servers {
		nodes[i] = pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { nodes[i].Close() })
	}
	return servers, nodes
}

// The default guard: masters that the Nodes saw restart (without
// persistence) do not count until the longest TTL used has passed, so a
// lock held on them before the restart cannot be granted again; masters
// met for the first time count at once; masters that persist every write
// are not guarded.
func TestRestartGuardSeenRestarts(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    redisproc.Options
		guarded bool
	}{
		{"no persistence", redisproc.Options{}, true},
		{"aof always", redisproc.Options{AppendOnly: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			servers, nodes := guardCluster(t, 3, c.opts)
			ctx := t.Context()
			l := newLocker(t, asNodes(nodes), redlock.Config{})
			first, err := l.TryLock(ctx, "k", 3*time.Second) // fresh masters count at once
			if err != nil {
				t.Fatalf("a lock on freshly started masters: %v", err)
			}
			for _, s := range servers[:2] {
				if err := s.Restart(0); err != nil {
					t.Fatal(err)
				}
			}
			// The restarted masters forgot first's key (without AOF); their
			// grants of it must not count while first may still be held.
			second, err := l.TryLock(ctx, "k", 3*time.Second)
			if c.guarded {
				if !errors.Is(err, redlock.ErrRestarted) || !errors.Is(err, redlock.ErrNotAcquired) {
					t.Fatalf("a lock right after 2 of 3 masters restarted empty: %v, want ErrRestarted", err)
				}
				if time.Now().Before(first.Until()) {
					await(t, "the restarted masters count once the TTL has passed", func() bool {
						lk, err := l.TryLock(ctx, "k", 3*time.Second)
						if err == nil {
							lk.Unlock(ctx)
						}
						return err == nil
					})
				}
				return
			}
			if err == nil {
				t.Fatalf("a held lock granted again after restarts with AOF (token %s)", second.Token())
			}
			if errors.Is(err, redlock.ErrRestarted) {
				t.Fatalf("durable masters guarded: %v", err)
			}
		})
	}
}

// The default guard lasts the longest TTL used, by an acquire, an Extend
// or a Resume: a lock held for 3s, on masters that then restart empty, is
// not granted again (for 1s) while it may still be held. (The guard
// counted only the acquires' TTLs: a lock taken for 1s and extended to 3s
// was granted again 2s after the restart, while still valid. The acquire
// case fails if acquires are not counted: the guard then lasts only the
// second the master's uptime is rounded to.)
func TestRestartGuardLastsLongestTTL(t *testing.T) {
	for _, c := range []struct {
		name string
		// longer returns the Lock that l holds for 3s (taken for 1s by
		// l, or by giver, and extended or resumed; or taken for 3s).
		longer func(ctx context.Context, l, giver *redlock.Locker) (*redlock.Lock, error)
	}{
		{"acquire", func(ctx context.Context, l, _ *redlock.Locker) (*redlock.Lock, error) {
			return l.TryLock(ctx, "k", 3*time.Second)
		}},
		{"extend", func(ctx context.Context, l, _ *redlock.Locker) (*redlock.Lock, error) {
			first, err := l.TryLock(ctx, "k", time.Second)
			if err != nil {
				return nil, err
			}
			return first, first.Extend(ctx, 3*time.Second)
		}},
		{"resume", func(ctx context.Context, l, giver *redlock.Locker) (*redlock.Lock, error) {
			given, err := giver.TryLock(ctx, "k", time.Second)
			if err != nil {
				return nil, err
			}
			return l.Resume(ctx, "k", given.Token(), 3*time.Second)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			servers, nodes := guardCluster(t, 3, redisproc.Options{})
			ctx := t.Context()
			l := newLocker(t, asNodes(nodes), redlock.Config{})
			first, err := c.longer(ctx, l, newLocker(t, asNodes(nodes), redlock.Config{}))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range servers[:2] {
				if err := s.Restart(0); err != nil {
					t.Fatal(err)
				}
			}
			for time.Now().Before(first.Until()) {
				if lk, err := l.TryLock(ctx, "k", time.Second); err == nil {
					t.Fatalf("granted again %v before the held lock's Until (token %s)", time.Until(first.Until()), lk.Token())
				} else if !errors.Is(err, redlock.ErrRestarted) {
					t.Fatalf("a lock while the restarted masters are guarded: %v, want ErrRestarted", err)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
}

// A positive RestartGuard guards every master up for less than it, also
// one met for the first time: a client that starts after a master
// restarted does not count it either.
func TestRestartGuardStrict(t *testing.T) {
	_, nodes := guardCluster(t, 3, redisproc.Options{})
	l := newLocker(t, asNodes(nodes), redlock.Config{RestartGuard: 2 * time.Second})
	_, err := l.TryLock(t.Context(), "k", time.Second)
	if !errors.Is(err, redlock.ErrRestarted) {
		t.Fatalf("masters up for less than the guard: %v, want ErrRestarted", err)
	}
	await(t, "the masters count once up for the guard", func() bool {
		lk, err := l.TryLock(t.Context(), "k", time.Second)
		if err == nil {
			lk.Unlock(t.Context())
		}
		return err == nil
	})
	off := newLocker(t, asNodes(nodes), redlock.Config{RestartGuard: -1})
	if lk, err := off.TryLock(t.Context(), "k2", time.Second); err != nil {
		t.Fatalf("guard off: %v", err)
	} else {
		lk.Unlock(t.Context())
	}
	runID, started, restarted, durable, ok := nodes[0].MasterIdentity()
	if !ok || runID == "" || restarted || durable || time.Since(started) > time.Minute {
		t.Fatalf("MasterIdentity = %q, %v, %v, %v, %v", runID, started, restarted, durable, ok)
	}
}

// The guard never ends before the master has been up for its length, by
// this client's clock. INFO's uptime_in_seconds counts whole seconds of
// the wall clock (floor(now) - floor(start)): a master started at x.95s
// reads 1 at (x+1).05s, after 0.1s. Here the masters restart just before
// a second boundary and are first read just after it.
func TestRestartGuardUptimeRoundsUp(t *testing.T) {
	const guard = 2 * time.Second
	servers, nodes := guardCluster(t, 3, redisproc.Options{})
	l := newLocker(t, asNodes(nodes), redlock.Config{RestartGuard: guard})
	for time.Now().Nanosecond() < 900_000_000 { // just before a second boundary
		time.Sleep(time.Millisecond)
	}
	before := time.Now() // the masters start after this
	for _, s := range servers {
		if err := s.Restart(0); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(before.Truncate(time.Second).Add(time.Second + 50*time.Millisecond))) // past the boundary
	for {
		lk, err := l.TryLock(t.Context(), "k", time.Second)
		if err == nil {
			lk.Unlock(t.Context())
			if up := time.Since(before); up < guard {
				t.Fatalf("granted %v after the restart, before the guard's %v", up, guard)
			}
			return
		}
		if !errors.Is(err, redlock.ErrRestarted) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
