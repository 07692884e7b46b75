package main_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// TestInspectAndUnlockASemaphore: a held semaphore reads held, with each
// permit's holder, whether its permits are found by SCAN or named by
// --permits; unlock --token releases one permit and --force the rest.
func TestInspectAndUnlockASemaphore(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	sem := c.locker(t, redlock.Config{}).Semaphore("sem", 3)
	var held []*redlock.Lock
	for range 2 {
		lk, err := sem.TryAcquire(ctx, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
	}
	for _, args := range [][]string{{"sem"}, {"sem", "--permits", "3"}} {
		rep := inspect(t, c, args...)
		if !rep.Held || len(rep.Holders) != 2 {
			t.Fatalf("%v: %+v", args, rep)
		}
		for _, lk := range held {
			if !slices.ContainsFunc(rep.Holders, func(h holderJSON) bool {
				return h.Kind == "permit" && h.Permit != nil && *h.Permit == lk.Permit() && h.Token == lk.Token() && h.Quorum && len(h.Masters) == 3
			}) {
				t.Errorf("%v: permit %d (%s) missing from %+v", args, lk.Permit(), lk.Token(), rep.Holders)
			}
		}
		for _, m := range rep.Masters {
			if len(m.Permits) != 2 || m.Permits[0].Permit >= m.Permits[1].Permit || m.Permits[0].TTLMs <= 0 {
				t.Errorf("%v: %s: permits %+v", args, m.Addr, m.Permits)
			}
		}
	}
	r := redlockRun(t, c.nodes, "inspect", "sem")
	if want := fmt.Sprintf("permit %d %s on 3 of 3 masters (quorum)", held[0].Permit(), held[0].Token()); !strings.Contains(r.stdout, want) ||
		!strings.Contains(r.stdout, "semaphore sem: 2 permit(s) held") || strings.Contains(r.stdout, "not held") {
		t.Errorf("text, want %q:\n%s", want, r.stdout)
	}

	r = redlockRun(t, c.nodes, "unlock", "--json", "sem", "--token", held[0].Token())
	var rep unlockJSON
	decode(t, r.stdout, &rep)
	if r.code != 0 || rep.RemovedOn != 3 || rep.Masters[0].Removed[0] != "permit" || c.exists(t, layout.Permit("sem", held[0].Permit())) != 0 {
		t.Fatalf("unlock --token: status %d, %+v", r.code, rep)
	}
	if c.exists(t, layout.Permit("sem", held[1].Permit())) != 3 {
		t.Fatal("unlock --token took the other permit too")
	}
	r = redlockRun(t, c.nodes, "unlock", "--force", "sem")
	if r.code != 0 || c.exists(t, layout.Permit("sem", held[1].Permit())) != 0 {
		t.Fatalf("unlock --force: status %d, output %q", r.code, r.stdout)
	}
	if rep := inspect(t, c, "sem"); rep.Held || len(rep.Holders) != 0 {
		t.Fatalf("after unlock: %+v", rep)
	}

	// A master too large to SCAN: its permits are looked for only with
	// --permits, and inspect says so.
	lk, err := sem.TryAcquire(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.do(t, 0, "EVAL", "for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'fill:' .. i, 'x') end", 0, 100*1000+1)
	large := inspect(t, c, "sem")
	if m := large.Masters[0]; !strings.Contains(m.PermitsNotScanned, "too many to SCAN") || len(m.Permits) != 0 || len(large.Masters[1].Permits) != 1 || !large.Held {
		t.Fatalf("a large master: %+v", large)
	}
	if rep := inspect(t, c, "sem", "--permits", "3"); len(rep.Masters[0].Permits) != 1 || rep.Holders[0].Token != lk.Token() || len(rep.Holders[0].Masters) != 3 {
		t.Fatalf("a large master, --permits: %+v", rep)
	}
}

// TestInspectShowsTheFairQueue: a fair lock's waiters, in the order they
// came, with their registrations' expiry.
func TestInspectShowsTheFairQueue(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{})
	holder, err := l.Fair("fair").Lock(ctx, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	wait := func() {
		wg.Go(func() {
			lk, err := l.Fair("fair").Lock(wctx, 30*time.Second)
			if err == nil {
				lk.Unlock(ctx)
				err = errors.New("a waiter got the held fair lock")
			}
			errs <- err
		})
	}
	queued := func(n int) func() bool {
		return func() bool {
			rep := inspect(t, c, "fair")
			return len(rep.Waiters) == n && !slices.ContainsFunc(rep.Waiters, func(w waiterJSON) bool { return !w.Quorum })
		}
	}
	// The holder's own registration stays until it expires (it no longer
	// refreshes it): only then is the first registration the first waiter's.
	await(t, "the holder's registration to expire", queued(0))
	wait()
	await(t, "the first waiter's registration", queued(1))
	first := inspect(t, c, "fair").Waiters[0].ID
	wait()
	await(t, "the second waiter's registration", queued(2))
	rep := inspect(t, c, "fair")
	if !rep.Held || rep.Holders[0].Token != holder.Token() || rep.Waiters[0].ID != first || rep.Waiters[0].Ticket >= rep.Waiters[1].Ticket {
		t.Fatalf("%+v", rep)
	}
	for _, m := range rep.Masters {
		if len(m.FairQueue) != 2 || m.FairQueue[0].ID != first || m.FairQueue[0].TTLMs <= 0 {
			t.Errorf("%s: fair queue %+v", m.Addr, m.FairQueue)
		}
	}
	if r := redlockRun(t, c.nodes, "inspect", "fair"); !strings.Contains(r.stdout, "fair waiter 1: "+first+", ticket") {
		t.Errorf("text:\n%s", r.stdout)
	}
	cancel()
	wg.Wait()
	for range 2 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Errorf("a waiter: %v", err)
		}
	}
	holder.Unlock(ctx)
}

// TestInspectAMultiKeyLock: the keys of a multi-key lock, inspected
// together, are said to be held by one token.
func TestInspectAMultiKeyLock(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	keys := []string{"{o:7}:pay", "{o:7}:stock"}
	lk, err := c.locker(t, redlock.Config{}).LockMulti(ctx, keys, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r := redlockRun(t, c.nodes, append([]string{"inspect", "--json"}, keys...)...)
	var reps []inspectJSON
	decode(t, r.stdout, &reps)
	if r.code != 0 || len(reps) != 2 {
		t.Fatalf("status %d, output %s", r.code, r.stdout)
	}
	for i, rep := range reps {
		if rep.Key != keys[i] || !rep.Held || len(rep.Holders) != 1 || rep.Holders[0].Token != lk.Token() || !slices.Equal(rep.Holders[0].Keys, keys) {
			t.Errorf("%s: %+v", keys[i], rep)
		}
	}
	r = redlockRun(t, c.nodes, append([]string{"inspect"}, keys...)...)
	if !strings.Contains(r.stdout, "token "+lk.Token()+" holds "+strings.Join(keys, ", ")+" on a quorum: one multi-key lock") {
		t.Errorf("text:\n%s", r.stdout)
	}
	if r := redlockRun(t, c.nodes, "unlock", keys[0], "--token", lk.Token()); r.code != 0 || c.exists(t, keys[0]) != 0 || c.exists(t, keys[1]) != 3 {
		t.Fatalf("unlock of one key: status %d, output %q", r.code, r.stdout)
	}
}
