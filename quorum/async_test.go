package quorum_test

import (
	"context"
	"errors"
	"fmt"
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

// Async counts callback votes without a goroutine per node; late failures
// are reported off the completing goroutine, and ErrNoAnswer once.
func TestAsyncCountsCallbacks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dones := make(chan quorum.Done, 5)
		var mu sync.Mutex
		failed := map[int]error{}
		var thens [5]int
		opts := quorum.Options{Need: 3, Timeout: 50 * ms,
			Failed: func(i int, err error) {
				mu.Lock()
				defer mu.Unlock()
				if _, dup := failed[i]; dup {
					t.Errorf("node %d reported twice", i)
				}
				failed[i] = err
			},
			Then: func(i int, v quorum.Vote) { thens[i]++ },
		}
		go func() {
			done := <-dones
			time.Sleep(ms)
			done.Vote(0, yes)
			done.Vote(1, fail)
			done.Vote(2, yes)
			done.Vote(3, yes) // decided here
			time.Sleep(ms)
			done.Vote(4, fail)
		}()
		res, err := quorum.Async(t.Context(), 5, opts, func(ctx context.Context, i int, done quorum.Done) {
			if i == 0 {
				dones <- done
			}
		})
		if err != nil || !res.OK() || res.Yes != 3 || res.Failed != 1 {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		mu.Lock()
		if len(failed) != 1 || failed[1] != errDown {
			t.Errorf("before return, Failed saw %v, want node 1", failed)
		}
		mu.Unlock()
		time.Sleep(2 * ms)
		synctest.Wait()
		mu.Lock()
		if len(failed) != 2 || failed[4] != errDown {
			t.Errorf("after the late failure, Failed saw %v, want nodes 1 and 4", failed)
		}
		mu.Unlock()
		if thens != [5]int{1, 1, 1, 1, 1} {
			t.Errorf("Then ran %v times", thens)
		}

		// A node that never answers counts as ErrNoAnswer at the timeout,
		// once, also when it fails later.
		clear(failed)
		start := time.Now()
		var done3 quorum.Done
		res, err = quorum.Async(t.Context(), 3, opts, func(ctx context.Context, i int, done quorum.Done) {
			done3 = done
			if i == 0 {
				done.Vote(i, yes)
			}
		})
		if err != nil || res.OK() || res.Failed != 2 || time.Since(start) != 50*ms {
			t.Fatalf("res=%+v err=%v after %v", res, err, time.Since(start))
		}
		done3.Vote(1, fail)
		done3.Vote(2, yes)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(failed) != 2 || !errors.Is(failed[1], quorum.ErrNoAnswer) || !errors.Is(failed[2], quorum.ErrNoAnswer) {
			t.Errorf("Failed saw %v, want ErrNoAnswer for nodes 1 and 2", failed)
		}
	})
}

// With ThenAtTimeout, a node that has not answered at the timeout gets
// Then with ErrNoAnswer, and again when its call returns; once Async has
// returned at the quorum, the timeout reports it to Failed, once.
func TestThenAtTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var thens []string
		var failed []error
		opts := quorum.Options{Need: 2, Timeout: 50 * ms, ThenAtTimeout: true,
			Then: func(i int, v quorum.Vote) {
				mu.Lock()
				defer mu.Unlock()
				thens = append(thens, fmt.Sprintf("%d:%v", i, v.Err))
			},
			Failed: func(i int, err error) {
				mu.Lock()
				defer mu.Unlock()
				failed = append(failed, err)
			},
		}
		var late quorum.Done
		res, err := quorum.Async(t.Context(), 3, opts, func(ctx context.Context, i int, done quorum.Done) {
			if i < 2 {
				done.Vote(i, yes)
			} else {
				late = done
			}
		})
		if err != nil || !res.OK() || res.Pending() != 1 {
			t.Fatalf("res=%+v err=%v", res, err)
		}
		time.Sleep(60 * ms)
		synctest.Wait()
		late.Vote(2, fail)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := []string{"0:<nil>", "1:<nil>", "2:" + quorum.ErrNoAnswer.Error(), "2:down"}
		if fmt.Sprint(thens) != fmt.Sprint(want) {
			t.Errorf("Then ran %v, want %v", thens, want)
		}
		if len(failed) != 1 || failed[0] != quorum.ErrNoAnswer {
			t.Errorf("Failed saw %v, want ErrNoAnswer once", failed)
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
		res, err := quorum.Async(ctx, 2, quorum.Options{Need: 1, Timeout: 30 * ms}, func(c context.Context, i int, done quorum.Done) {
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
