package nodeutil_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// Callers that ask while a confirmation runs share the next one: a burst
// costs two commits, not one per caller, and each caller hears once.
func TestCommitterGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		commits := 0
		c := &nodeutil.Committer{Commit: func(ctx context.Context) (int, int, error) {
			mu.Lock()
			commits++
			n := commits
			mu.Unlock()
			if n == 1 {
				<-release // the first confirmation is slow: the others queue
			}
			return 1, 0, nil
		}}
		var wg sync.WaitGroup
		heard := make([]int, 10)
		for i := range heard {
			wg.Add(1)
			c.Durable(t.Context(), func(local, replicas int, err error) {
				if err == nil && local == 1 {
					heard[i]++
				}
				wg.Done()
			})
			if i == 0 {
				synctest.Wait() // the first one's commit runs
			}
		}
		close(release)
		wg.Wait()
		if commits != 2 {
			t.Errorf("%d commits for a burst of 10, want 2", commits)
		}
		for i, h := range heard {
			if h != 1 {
				t.Errorf("caller %d heard %d times", i, h)
			}
		}
	})
}

// A confirmation runs until the latest deadline of the callers it covers,
// and no caller's cancellation ends it: its Commit sees that deadline, not
// the first caller's cancel.
func TestCommitterDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var seen []time.Time
		c := &nodeutil.Committer{Commit: func(ctx context.Context) (int, int, error) {
			dl, _ := ctx.Deadline()
			seen = append(seen, dl)
			if len(seen) == 1 {
				<-release
			}
			return 1, 0, ctx.Err()
		}}
		start := time.Now()
		first, cancel := context.WithTimeout(t.Context(), time.Second)
		done := make(chan error, 3)
		c.Durable(first, func(_, _ int, err error) { done <- err })
		synctest.Wait()
		cancel() // the first caller gives up: its confirmation goes on
		short, cancelShort := context.WithTimeout(t.Context(), time.Second)
		defer cancelShort()
		long, cancelLong := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancelLong()
		c.Durable(short, func(_, _ int, err error) { done <- err })
		c.Durable(long, func(_, _ int, err error) { done <- err })
		close(release)
		for range 3 {
			if err := <-done; err != nil {
				t.Errorf("a caller heard %v", err)
			}
		}
		if len(seen) != 2 || !seen[0].Equal(start.Add(time.Second)) || !seen[1].Equal(start.Add(3*time.Second)) {
			t.Fatalf("the confirmations' deadlines were %v, want +1s and +3s from %v", seen, start)
		}
	})
}

// A failed confirmation is every waiting caller's.
func TestCommitterError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		boom := errors.New("boom")
		c := &nodeutil.Committer{Commit: func(context.Context) (int, int, error) { return 0, 0, boom }}
		done := make(chan error, 1)
		c.Durable(t.Context(), func(_, _ int, err error) { done <- err })
		if err := <-done; !errors.Is(err, boom) {
			t.Fatalf("got %v, want the commit's error", err)
		}
	})
}

// Durables keeps a Committer per kind, hands each confirmation the kind it
// asked for, and fails one made by another master process than the one the
// Node knew when the caller asked (ErrMasterChanged); an unknown process
// passes.
func TestDurables(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		known, answering := "a", "a"
		asked := map[[2]int]int{}
		probes := map[string]int{}
		d := &nodeutil.Durables{
			RunID: func() string { mu.Lock(); defer mu.Unlock(); return known },
			Commit: func(_ context.Context, probe string, local bool, replicas int) (int, int, string, error) {
				mu.Lock()
				defer mu.Unlock()
				probes[probe]++
				l := 0
				if local {
					l = 1
				}
				asked[[2]int{l, replicas}]++
				return l, replicas, answering, nil
			},
		}
		ask := func(local bool, replicas int) (int, int, error) {
			type outcome struct {
				l, r int
				err  error
			}
			ch := make(chan outcome, 1)
			d.Confirm(t.Context(), "p:probe", local, replicas, func(l, r int, err error) { ch <- outcome{l, r, err} })
			o := <-ch
			return o.l, o.r, o.err
		}
		set := func(k, a string) { mu.Lock(); known, answering = k, a; mu.Unlock() }
		if l, r, err := ask(true, 2); err != nil || l != 1 || r != 2 {
			t.Errorf("local and 2 replicas: %d %d %v", l, r, err)
		}
		if _, r, err := ask(false, 1); err != nil || r != 1 {
			t.Errorf("1 replica: %d %v", r, err)
		}
		set("a", "b") // restarted between the write and its confirmation
		if _, _, err := ask(false, 1); !errors.Is(err, nodeutil.ErrMasterChanged) {
			t.Errorf("confirmed by another process: %v, want ErrMasterChanged", err)
		}
		for _, runIDs := range [][2]string{{"", "b"}, {"b", ""}, {"b", "b"}} {
			set(runIDs[0], runIDs[1])
			if _, _, err := ask(false, 1); err != nil {
				t.Errorf("known %q, answered by %q: %v", runIDs[0], runIDs[1], err)
			}
		}
		if asked[[2]int{1, 2}] != 1 || asked[[2]int{0, 1}] != 5 {
			t.Errorf("commits per kind: %v", asked)
		}
		if probes["p:probe"] != 6 || len(probes) != 1 {
			t.Errorf("probes written: %v, want the caller's probe key each time", probes)
		}
	})
}
