package main_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// TestForceRemovesEveryKind: unlock --force removes the state of every
// lock kind, each recognised by its layout (a plain, fenced, multi-key
// or fair lock's token, a reentrant hash, a read-write lock's writer,
// readers and waiting writer, a semaphore's permits, run's holder record),
// and leaves the fencing counters and the restart guard's record.
func TestForceRemovesEveryKind(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{Fencing: true})
	must := func(_ *redlock.Lock, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(l.Lock(ctx, "fenced", 30*time.Second))
	must(l.Reentrant("re", "job-7").Lock(ctx, 30*time.Second))
	must(l.Reentrant("re", "job-7").Lock(ctx, 30*time.Second))
	must(l.RWMutex("rw").Lock(ctx, 30*time.Second))
	must(l.RWMutex("rd").RLock(ctx, 30*time.Second))
	must(l.RWMutex("rd").RLock(ctx, 30*time.Second))
	// A writer that finds readers announces itself ({ww}:wq) and waits.
	must(l.RWMutex("ww").RLock(ctx, 30*time.Second))
	if _, err := l.RWMutex("ww").TryLock(ctx, 30*time.Second); err == nil {
		t.Fatal("a writer got a read-locked lock")
	}
	must(l.Fair("fair").Lock(ctx, 30*time.Second))
	must(l.LockMulti(ctx, []string{"{m}:a", "{m}:b"}, 30*time.Second))
	sem := l.Semaphore("sem", 3)
	must(sem.TryAcquire(ctx, 30*time.Second))
	must(sem.TryAcquire(ctx, 30*time.Second))
	plain := c.locker(t, redlock.Config{})
	must(plain.Lock(ctx, "plain", 30*time.Second))

	dir := t.TempDir()
	tok, gate := filepath.Join(dir, "tok"), filepath.Join(dir, "gate")
	run := background(t, c.nodes, "run", "--ttl", "3s", "held", "--", "sh", "-c", holdJob(tok, gate))
	readToken(t, tok)
	await(t, "run's holder record", func() bool { return c.exists(t, layout.Holder("held")) == 3 })

	for _, tc := range []struct {
		key  string
		gone []string // on every master, once forced
	}{
		{"plain", []string{"plain"}},
		{"fenced", []string{"fenced"}},
		{"re", []string{"re"}},
		{"rw", []string{layout.RWKeys("rw").Writer}},
		{"rd", []string{layout.RWKeys("rd").Readers}},
		{"ww", []string{layout.RWKeys("ww").Readers, layout.RWKeys("ww").Waiting}},
		{"fair", []string{"fair"}},
		{"{m}:a", []string{"{m}:a"}},
		{"{m}:b", []string{"{m}:b"}},
		{"sem", []string{layout.Permit("sem", 0), layout.Permit("sem", 1), layout.Permit("sem", 2)}},
		{"held", []string{"held", layout.Holder("held")}},
	} {
		r := redlockRun(t, c.nodes, "unlock", "--force", tc.key)
		if r.code != 0 {
			t.Errorf("unlock --force %s: status %d, output %q, stderr %q", tc.key, r.code, r.stdout, r.stderr)
		}
		for _, k := range tc.gone {
			if n := c.exists(t, k); n != 0 {
				t.Errorf("unlock --force %s: %s left on %d masters", tc.key, k, n)
			}
		}
	}
	for _, k := range []string{layout.Fence("fenced"), layout.Fence("re"), layout.Fence("rw"), layout.Registry("")} {
		if n := c.exists(t, k); n != 3 {
			t.Errorf("%s is left on %d of 3 masters, want all", k, n)
		}
	}
	if res := run.finish(t); res.code != 75 {
		t.Errorf("the run whose lock was forced: status %d, want 75; stderr %q", res.code, res.stderr)
	}
}

// TestForceNeverDeletesTheLibrarysMemory: the restart guard's record and
// a fencing counter, named as KEY, are left alone (status 65), with a
// TTL or without, whatever they hold.
func TestForceNeverDeletesTheLibrarysMemory(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	lk, err := c.locker(t, redlock.Config{Fencing: true}).Lock(ctx, "job", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{layout.Registry(""), layout.Fence("job")} {
		for _, args := range [][]string{{"unlock", "--force", key}, {"unlock", "--force", "--permits", "1", key}} {
			if r := redlockRun(t, c.nodes, args...); r.code != 65 || c.exists(t, key) != 3 {
				t.Errorf("%q: status %d, output %q; %s left on %d of 3 masters", args, r.code, r.stdout, key, c.exists(t, key))
			}
		}
	}
	if r := redlockRun(t, c.nodes, "unlock", "--force", "job"); r.code != 0 || c.exists(t, "job") != 0 || c.exists(t, layout.Fence("job")) != 3 {
		t.Fatalf("the lock itself: status %d, output %q", r.code, r.stdout)
	}
	if err := lk.Extend(ctx, time.Second); err == nil {
		t.Fatal("the lock survived unlock --force")
	}
}
