package bench

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestDriveTellsRetriesFromHangs: a call that retries until its context
// ends and then returns is an error of the turn, not a hang; a call that
// outlives its context is a hang, and unstick frees it.
func TestDriveTellsRetriesFromHangs(t *testing.T) {
	const d, hangAfter = time.Second, 4 * time.Second
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ended atomic.Int64
		_, hung, returned := drive(2, d, hangAfter, nil, func(ctx context.Context, i int, end time.Time) {
			<-ctx.Done() // a Lock that keeps being refused until its deadline
			ended.Store(int64(time.Since(start)))
		})
		if hung || !returned {
			t.Errorf("calls that return when their context ends: hung %v, returned %v; want false, true", hung, returned)
		}
		if got, want := time.Duration(ended.Load()), d+hangAfter/2; got != want {
			t.Errorf("the calls' context ended %v after the start, want %v", got, want)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		stuck := make(chan struct{})
		_, hung, returned := drive(1, d, hangAfter, func() { close(stuck) }, func(ctx context.Context, i int, end time.Time) {
			<-stuck // a call that ignores its context until the fault is lifted
		})
		if !hung || !returned {
			t.Errorf("a call freed only by unstick: hung %v, returned %v; want true, true", hung, returned)
		}
	})
}
