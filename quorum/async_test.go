package quorum_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// With Timeout 0 the node calls keep the caller's deadline, but not its
// cancellation: a frozen node counts as failed at that deadline.
func TestZeroTimeoutKeepsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 40*ms)
		defer cancel()
		var mu sync.Mutex
		var deadlines [3]time.Time
		start := time.Now()
		res, err := quorum.Do(ctx, 3, quorum.Options{Need: 2}, func(ctx context.Context, i int) quorum.Vote {
			mu.Lock()
			deadlines[i], _ = ctx.Deadline()
			mu.Unlock()
			if i == 0 {
				return yes
			}
			<-ctx.Done()
			return quorum.Vote{Err: ctx.Err()}
		})
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Fatal(err)
		}
		if time.Since(start) != 40*ms || res.OK() {
			t.Fatalf("after %v: ok=%v, want a failure at the caller's 40ms deadline", time.Since(start), res.OK())
		}
		mu.Lock()
		defer mu.Unlock()
		for i, dl := range deadlines {
			if !dl.Equal(start.Add(40 * ms)) {
				t.Errorf("node %d: deadline %v, want the caller's", i, dl.Sub(start))
			}
		}
	})
}

// With Timeout 0 the caller's cancellation does not reach the node calls.
func TestZeroTimeoutDropsCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		release := make(chan struct{})
		var cancelled [2]bool
		time.AfterFunc(5*ms, cancel)
		res, err := quorum.Do(ctx, 2, quorum.Options{Need: 2}, func(nctx context.Context, i int) quorum.Vote {
			select {
			case <-nctx.Done():
				cancelled[i] = true
			case <-release:
			}
			return yes
		})
		if !errors.Is(err, context.Canceled) || res.Pending() != 2 {
			t.Fatalf("err=%v pending=%d, want context.Canceled with 2 pending", err, res.Pending())
		}
		close(release)
		synctest.Wait()
		if cancelled != [2]bool{} {
			t.Fatal("the caller's cancellation reached the node calls")
		}
	})
}

// Async counts callback votes without a goroutine per node, and tells
// each caller whether its vote was counted: a vote that comes after the
// outcome was decided is late (its caller alone knows of it), while one
// recorded as ErrNoAnswer at the timeout stays counted.
func TestAsyncCountsCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dones := make(chan quorum.Tally, 5)
		var counted [5]bool
		go func() {
			done := <-dones
			time.Sleep(ms)
			for i, v := range []quorum.Vote{yes, fail, yes, yes} { // decided at node 3
				counted[i] = done.Vote(i, v)
			}
			time.Sleep(ms)
			counted[4] = done.Vote(4, fail)
		}()
		res, err := quorum.Async(t.Context(), 5, quorum.Options{Need: 3, Timeout: 50 * ms}, func(ctx context.Context, i int, done quorum.Tally) {
			if i == 0 {
				dones <- done
			}
		})
		if err != nil || !res.OK() || res.Yes != 3 || res.Failed != 1 || res.Pending() != 1 {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		time.Sleep(2 * ms)
		synctest.Wait()
		if counted != [5]bool{true, true, true, true, false} {
			t.Errorf("counted = %v, want the late fifth vote not counted", counted)
		}
		if res.Answered[4] || res.Votes[4].Err != nil {
			t.Errorf("the late vote changed the Result: %+v", res.Votes[4])
		}

		// A node that never answers counts as ErrNoAnswer at the timeout;
		// its later vote is part of the Result already (counted), and
		// changes nothing.
		start := time.Now()
		var late quorum.Tally
		res, err = quorum.Async(t.Context(), 3, quorum.Options{Need: 2, Timeout: 50 * ms}, func(ctx context.Context, i int, done quorum.Tally) {
			late = done
			if i == 0 {
				done.Vote(i, yes)
			}
		})
		if err != nil || res.OK() || res.Failed != 2 || time.Since(start) != 50*ms {
			t.Fatalf("res=%+v err=%v after %v", res, err, time.Since(start))
		}
		if !errors.Is(res.Err(nil), quorum.ErrNoAnswer) {
			t.Errorf("Err() = %v, want ErrNoAnswer", res.Err(nil))
		}
		if !late.Vote(1, yes) || res.Yes != 1 || !errors.Is(res.Votes[1].Err, quorum.ErrNoAnswer) {
			t.Errorf("a vote after the timeout: res=%+v", res)
		}
	})
}

// Async starts the calls even when the caller's context has ended (the
// caller decides whether to send), and returns its error at once unless
// the outcome is decided meanwhile.
func TestAsyncStartsOnEndedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		var started [2]bool
		res, err := quorum.Async(ctx, 2, quorum.Options{Need: 2, Timeout: 30 * ms}, func(c context.Context, i int, done quorum.Tally) {
			started[i] = true
		})
		if !errors.Is(err, context.Canceled) || res.Pending() != 2 || started != [2]bool{true, true} {
			t.Fatalf("err=%v pending=%d started=%v", err, res.Pending(), started)
		}
	})
}

type ctxKey struct{}

// The node calls' context carries the caller's values, the fan-out's
// deadline, and ends at it, also after Async returned; the caller's
// cancellation does not reach it.
func TestNodeContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "v"))
		var nctx context.Context
		start := time.Now()
		res, err := quorum.Async(ctx, 2, quorum.Options{Need: 1, Timeout: 30 * ms}, func(c context.Context, i int, done quorum.Tally) {
			if i == 0 {
				nctx = c
				done.Vote(i, yes)
			}
		})
		if err != nil || !res.OK() {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		cancel()
		if nctx.Value(ctxKey{}) != "v" {
			t.Error("the caller's value is lost")
		}
		if dl, ok := nctx.Deadline(); !ok || !dl.Equal(start.Add(30*ms)) {
			t.Errorf("Deadline() = %v, %v; want the fan-out's", dl, ok)
		}
		if nctx.Err() != nil {
			t.Errorf("Err() = %v before the deadline, after the caller's cancel", nctx.Err())
		}
		<-nctx.Done()
		if time.Since(start) != 30*ms || !errors.Is(nctx.Err(), context.DeadlineExceeded) {
			t.Errorf("ended after %v with %v, want DeadlineExceeded at 30ms", time.Since(start), nctx.Err())
		}
	})
}
