package nodeutil_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

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
