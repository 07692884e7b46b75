package quorum_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/quorumlock/quorumlock/quorum"
)

var errDown = errors.New("down")

// script makes node i answer vote after delays[i]; a negative delay never
// answers until its context ends (a frozen node).
func script(delays []time.Duration, votes []quorum.Vote) func(context.Context, int) quorum.Vote {
	return func(ctx context.Context, i int) quorum.Vote {
		if delays[i] < 0 {
			<-ctx.Done()
			return quorum.Vote{Err: ctx.Err()}
		}
		select {
		case <-time.After(delays[i]):
			return votes[i]
		case <-ctx.Done():
			return quorum.Vote{Err: ctx.Err()}
		}
	}
}

var (
	yes  = quorum.Vote{Yes: true}
	no   = quorum.Vote{}
	fail = quorum.Vote{Err: errDown}
	ms   = time.Millisecond
)

func TestDoDecidesEarly(t *testing.T) {
	tests := []struct {
		name          string
		delays        []time.Duration
		votes         []quorum.Vote
		wantOK        bool
		wantElapsed   time.Duration
		yes, no, fail int
	}{
		{"quorum of fast yes, one frozen", []time.Duration{1 * ms, 2 * ms, 3 * ms, 4 * ms, -1}, []quorum.Vote{yes, yes, yes, yes, yes}, true, 3 * ms, 3, 0, 0},
		{"refusals make quorum impossible", []time.Duration{1 * ms, 2 * ms, 3 * ms, 40 * ms, -1}, []quorum.Vote{no, no, no, yes, yes}, false, 3 * ms, 0, 3, 0},
		{"failures and refusals mix", []time.Duration{1 * ms, 2 * ms, 3 * ms, 40 * ms, 40 * ms}, []quorum.Vote{fail, no, fail, yes, yes}, false, 3 * ms, 0, 1, 2},
		{"three of five down", []time.Duration{-1, -1, -1, 1 * ms, 1 * ms}, []quorum.Vote{yes, yes, yes, yes, yes}, false, 50 * ms, 2, 0, 3},
		{"error reply is never a grant", []time.Duration{1 * ms, 0, 2 * ms}, []quorum.Vote{{Yes: true, Err: errDown}, yes, {Yes: true, Err: errDown}}, false, 2 * ms, 1, 0, 2},
		{"single node", []time.Duration{1 * ms}, []quorum.Vote{yes}, true, 1 * ms, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				n := len(tt.delays)
				start := time.Now()
				res, err := quorum.Do(t.Context(), n, quorum.Options{Need: n/2 + 1, Timeout: 50 * ms}, script(tt.delays, tt.votes))
				if err != nil {
					t.Fatal(err)
				}
				if got := time.Since(start); got != tt.wantElapsed {
					t.Errorf("decided after %v, want %v", got, tt.wantElapsed)
				}
				if res.OK() != tt.wantOK || res.Yes != tt.yes || res.No != tt.no || res.Failed != tt.fail {
					t.Errorf("got ok=%v yes=%d no=%d failed=%d, want ok=%v %d/%d/%d", res.OK(), res.Yes, res.No, res.Failed, tt.wantOK, tt.yes, tt.no, tt.fail)
				}
				if res.Pending() != n-tt.yes-tt.no-tt.fail {
					t.Errorf("Pending() = %d", res.Pending())
				}
				time.Sleep(50 * ms) // fake time: the calls still in flight end at their timeout
			})
		})
	}
}

func TestDoTimesOutUncooperativeCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		start := time.Now()
		res, err := quorum.Do(t.Context(), 3, quorum.Options{Need: 2, Timeout: 20 * ms}, func(ctx context.Context, i int) quorum.Vote {
			if i == 0 {
				return yes
			}
			<-release // ignores its context
			return yes
		})
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) != 20*ms || res.OK() || res.Failed != 2 {
			t.Fatalf("after %v: ok=%v failed=%d, want a failure at the 20ms timeout", time.Since(start), res.OK(), res.Failed)
		}
		if !errors.Is(res.Err(nil), quorum.ErrNoAnswer) {
			t.Fatalf("Err() = %v, want ErrNoAnswer", res.Err(nil))
		}
		close(release)
	})
}

func TestDoContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(5*ms, cancel)
		var finished atomic.Int32
		res, err := quorum.Do(ctx, 3, quorum.Options{Need: 2, Timeout: 30 * ms}, func(ctx context.Context, i int) quorum.Vote {
			<-ctx.Done() // the caller's cancel must not reach here; only the timeout
			finished.Add(1)
			return quorum.Vote{Err: ctx.Err()}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if res == nil || res.Pending() != 3 {
			t.Fatalf("res = %+v, want 3 pending", res)
		}
		synctest.Wait()
		if finished.Load() != 0 {
			t.Fatal("the caller's cancellation reached the node calls")
		}
		time.Sleep(30 * ms)
		synctest.Wait()
		if finished.Load() != 3 {
			t.Fatalf("%d calls finished at their timeout, want 3", finished.Load())
		}
	})
}

func TestErrLabelsNodes(t *testing.T) {
	res, err := quorum.Do(t.Context(), 3, quorum.Options{Need: 3}, func(ctx context.Context, i int) quorum.Vote {
		if i == 1 {
			return fail
		}
		return yes
	})
	if err != nil {
		t.Fatal(err)
	}
	all := res.Err(func(i int) string { return []string{"a", "b", "c"}[i] })
	var merr *multierror.Error
	var nerr *quorum.NodeError
	if !errors.As(all, &merr) || len(merr.Errors) != 1 || !errors.As(all, &nerr) || nerr.Node != "b" || !errors.Is(all, errDown) {
		t.Fatalf("Err() = %#v", all)
	}
}

func TestDoRejectsBadArguments(t *testing.T) {
	for _, tt := range []struct{ n, need int }{{0, 1}, {3, 0}, {3, 4}, {-1, 1}} {
		called := false
		_, err := quorum.Do(t.Context(), tt.n, quorum.Options{Need: tt.need}, func(context.Context, int) quorum.Vote {
			called = true
			return yes
		})
		if err == nil || called {
			t.Errorf("n=%d need=%d: err=%v called=%v, want an error and no call", tt.n, tt.need, err, called)
		}
	}
}
