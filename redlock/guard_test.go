package redlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

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
	id, err := nodes[0].Identity()
	if err != nil || id.RunID == "" || id.PersistsEveryWrite() || time.Since(id.Started) > time.Minute {
		t.Fatalf("Identity = %+v, %v", id, err)
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

// restartEmpty restarts servers at once; without AOF they come back empty.
func restartEmpty(t *testing.T, servers []*redisproc.Server) {
	t.Helper()
	for _, s := range servers {
		if err := s.Restart(0); err != nil {
			t.Fatal(err)
		}
	}
}

// freshLocker is a Locker over Nodes of its own, as a process that starts
// now makes it: it has seen none of the masters before.
func freshLocker(t *testing.T, servers []*redisproc.Server, cfg redlock.Config) *redlock.Locker {
	t.Helper()
	nodes := make([]redlock.Node, len(servers))
	for i, s := range servers {
		n := pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { n.Close() })
		nodes[i] = n
	}
	return newLocker(t, nodes, cfg)
}

// neverBefore tries key with l until held's Until has passed, and fails the
// test if l gets it before; every refusal must be the restart guard's.
func neverBefore(t *testing.T, l *redlock.Locker, key string, ttl time.Duration, held *redlock.Lock) {
	t.Helper()
	tries := 0
	for time.Now().Before(held.Until()) {
		lk, err := l.TryLock(t.Context(), key, ttl)
		if err == nil {
			t.Fatalf("a second holder %v before the held lock's Until (token %s, after %d tries)", time.Until(held.Until()), lk.Token(), tries)
		}
		if !errors.Is(err, redlock.ErrRestarted) {
			t.Fatalf("try %d while the restarted masters are guarded: %v, want ErrRestarted", tries, err)
		}
		tries++
		time.Sleep(100 * time.Millisecond)
	}
	if tries == 0 {
		t.Fatal("the held lock's Until passed before any try: the test proved nothing")
	}
}

// A process that first meets the masters after two of three restarted
// empty (a "redlock run", a service started later) does not count them
// while a lock they forgot may still be held, although it never saw them
// before and uses a shorter TTL than the holder: the masters' records
// tell it they were used, and for how long. (Before the records, its
// Nodes' first reading was the baseline: a second holder at once.)
func TestRestartGuardFreshProcess(t *testing.T) {
	servers, nodes := guardCluster(t, 3, redisproc.Options{})
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	held, err := holder.TryLock(t.Context(), "k", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	restartEmpty(t, servers[:2])
	later := freshLocker(t, servers, redlock.Config{})
	neverBefore(t, later, "k", time.Second, held)
	await(t, "the fresh process gets the lock once the guard passed", func() bool {
		lk, err := later.TryLock(t.Context(), "k", time.Second)
		if err == nil {
			lk.Unlock(t.Context())
		}
		return err == nil
	})
}

// A master that ran without AOF and is restarted with appendfsync always
// (the doctor's advice) comes back empty: the persistence it has now does
// not make it keep what it lost. (Before, the guard judged persistence on
// the connection after the restart, and trusted it at once.)
func TestRestartGuardPersistenceChanged(t *testing.T) {
	servers, nodes := guardCluster(t, 3, redisproc.Options{})
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	held, err := holder.TryLock(t.Context(), "k", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers[:2] {
		s.SetAppendOnly(true)
	}
	restartEmpty(t, servers[:2])
	neverBefore(t, freshLocker(t, servers, redlock.Config{}), "k", time.Second, held)
}

// Masters that persist every write and restart keep their grants: a
// process that meets them after the restart counts them at once, and the
// held lock stays held.
func TestRestartGuardKeptEveryWrite(t *testing.T) {
	servers, nodes := guardCluster(t, 3, redisproc.Options{AppendOnly: true})
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	if _, err := holder.TryLock(t.Context(), "k", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	restartEmpty(t, servers[:2])
	later := freshLocker(t, servers, redlock.Config{})
	if lk, err := later.TryLock(t.Context(), "k", time.Second); err == nil || errors.Is(err, redlock.ErrRestarted) {
		t.Fatalf("the held lock after a restart with every write kept: %v (lock %v), want a plain refusal", err, lk)
	}
	lk, err := later.TryLock(t.Context(), "other", time.Second)
	if err != nil {
		t.Fatalf("another lock on masters that kept every write: %v, want it at once", err)
	}
	lk.Unlock(t.Context())
}

// A fresh deployment locks at once: no master was ever used, so none is
// held back; and its masters then carry records naming their processes,
// so that the next process counts them at once too.
func TestRestartGuardFreshDeployment(t *testing.T) {
	servers, nodes := guardCluster(t, 3, redisproc.Options{})
	l := newLocker(t, asNodes(nodes), redlock.Config{KeyPrefix: "app:"})
	lk, err := l.TryLock(t.Context(), "k", 2*time.Second)
	if err != nil {
		t.Fatalf("a lock on a fresh deployment: %v", err)
	}
	lk.Unlock(t.Context())
	for i, n := range nodes {
		id, err := n.Identity()
		if err != nil {
			t.Fatal(err)
		}
		rec, err := redis.StringMap(n.Do(t.Context(), "HGETALL", "app:{quorumlock}:guard"))
		if err != nil || rec["run"] != id.RunID || rec["ttl"] != "2000" || rec["fsync"] != "other" {
			t.Errorf("master %d's record: %v, %v; want its run id %s and a TTL of 2000ms", i, rec, err, id.RunID)
		}
	}
	lk, err = freshLocker(t, servers, redlock.Config{KeyPrefix: "app:"}).TryLock(t.Context(), "k", time.Second)
	if err != nil {
		t.Fatalf("a second process on a registered deployment: %v", err)
	}
	lk.Unlock(t.Context())
}

// A master whose client user may not run INFO cannot have its restarts
// guarded: the lock fails with an error that names the master and what is
// missing, and matches ErrInvalid, never ErrUnavailable (code that runs
// anyway when Redis is down must not run unlocked for a misconfiguration).
// With the guard off it locks.
func TestRestartGuardIdentityRefused(t *testing.T) {
	servers := redistest.Start(t, 3, redisproc.Options{})
	nodes := make([]redlock.Node, len(servers))
	for i, s := range servers {
		c, err := redis.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do("ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info"); err != nil {
			t.Fatal(err)
		}
		c.Close()
		n := pool.New(pool.Config{Addr: s.Addr(), Username: "noinfo", Password: "pw"})
		t.Cleanup(func() { n.Close() })
		nodes[i] = n
	}
	_, err := newLocker(t, nodes, redlock.Config{}).TryLock(t.Context(), "k", time.Second)
	if !errors.Is(err, redlock.ErrInvalid) || errors.Is(err, redlock.ErrUnavailable) || !strings.Contains(err.Error(), "INFO") || !strings.Contains(err.Error(), "master 127.0.0.1:") {
		t.Fatalf("a lock through users without INFO: %v; want ErrInvalid naming the master and INFO, not ErrUnavailable", err)
	}
	lk, err := newLocker(t, nodes, redlock.Config{RestartGuard: -1}).TryLock(t.Context(), "k", time.Second)
	if err != nil {
		t.Fatalf("with the guard off: %v", err)
	}
	lk.Unlock(t.Context())
}
