package nodeutil_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// job is a Job that records the context it ran under and waits for
// release, when set, before it returns reply.
type job struct {
	nodeutil.Detached
	release chan struct{}
	reply   any
	ran     chan context.Context
}

func newJob() *job { return &job{ran: make(chan context.Context, 1)} }

func (j *job) Send(ctx context.Context) (any, error) {
	j.ran <- ctx
	if j.release != nil {
		<-j.release
	}
	return j.reply, ctx.Err()
}

type key struct{}

// The Job runs under a context with the caller's values, a deadline linger
// past the caller's, and no end of its own without a timer.
func TestDetachedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := context.WithValue(t.Context(), key{}, "v")
		ctx, cancel := context.WithTimeout(parent, time.Second)
		defer cancel()
		j := newJob()
		j.reply = "r"
		if got, err := j.Run(ctx, j, time.Minute, false); got != "r" || err != nil {
			t.Fatalf("Run = %v, %v", got, err)
		}
		dctx := <-j.ran
		if dctx.Value(key{}) != "v" {
			t.Error("the Job's context lost the caller's value")
		}
		caller, _ := ctx.Deadline()
		if dl, ok := dctx.Deadline(); !ok || !dl.Equal(caller.Add(time.Minute)) {
			t.Errorf("the Job's deadline = %v, %v; want the caller's plus the linger", dl, ok)
		}
		if dctx.Done() != nil || dctx.Err() != nil {
			t.Error("an untimed Detached has an end")
		}

		// Without a deadline in the caller's context: linger past now.
		j = newJob()
		start := time.Now()
		j.Run(t.Context(), j, time.Minute, false)
		if dl, ok := (<-j.ran).Deadline(); !ok || !dl.Equal(start.Add(time.Minute)) {
			t.Errorf("deadline without the caller's = %v, %v; want now plus the linger", dl, ok)
		}
		// linger < 0: no deadline at all, whatever the caller's.
		j = newJob()
		j.Run(ctx, j, -1, true)
		if dctx := <-j.ran; dctx.Done() != nil {
			t.Error("a Detached without a deadline has a Done channel")
		} else if _, ok := dctx.Deadline(); ok {
			t.Error("linger < 0 gave a deadline")
		}
	})
}

// The caller returns when its context ends; the Job goes on, and with a
// timer its context ends at the deadline.
func TestDetachedOutlivesCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		j := newJob()
		j.release = make(chan struct{})
		if _, err := j.Run(ctx, j, time.Second, true); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Run past its caller's deadline: %v", err)
		}
		dctx := <-j.ran
		if dctx.Err() != nil {
			t.Fatal("the Job's context ended with its caller's")
		}
		time.Sleep(time.Second - time.Millisecond) // from the caller's deadline
		if dctx.Err() != nil {
			t.Fatal("the Job's context ended before the linger")
		}
		time.Sleep(2 * time.Millisecond)
		synctest.Wait() // the timer's func has run
		select {
		case <-dctx.Done():
		default:
			t.Fatal("Done still open past the linger")
		}
		if !errors.Is(dctx.Err(), context.DeadlineExceeded) {
			t.Errorf("Err past the linger = %v", dctx.Err())
		}
		close(j.release)
		synctest.Wait()

		// A Job that returns ends its context, as a cancel func does.
		j = newJob()
		j.Run(t.Context(), j, time.Second, true)
		if dctx := <-j.ran; !errors.Is(dctx.Err(), context.Canceled) {
			t.Errorf("Err after the Job returned = %v, want Canceled", dctx.Err())
		}

		// A timed deadline that passes while the caller still waits (its
		// context has none) ends the wait.
		j = newJob()
		j.release = make(chan struct{})
		if _, err := j.Run(t.Context(), j, time.Second, true); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Run whose timed deadline passed: %v", err)
		}
		close(j.release)
		synctest.Wait()
	})
}

// An ended context runs nothing.
func TestDetachedEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	j := newJob()
	if _, err := j.Run(ctx, j, time.Second, false); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with an ended context: %v", err)
	}
	select {
	case <-j.ran:
		t.Error("the Job ran")
	default:
	}
}

// A script call through Exec costs three allocations: the call (its
// Detached and its command), its goroutine, and the channel its caller
// waits on. A context that its caller cannot cancel adds nothing.
func TestExecAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	e := &nodeutil.Exec[struct{}]{
		Name:   "fake",
		Addr:   "m:1",
		Client: func(context.Context) (struct{}, error) { return struct{}{}, nil },
		Send: func(context.Context, struct{}, []string, []string, []string) (any, error) {
			return int64(1), nil
		},
		Reply:      func(error) (error, bool) { return nil, false },
		IsNoScript: func(error) bool { return false },
	}
	ctx := context.WithoutCancel(t.Context())
	args := []any{"0123456789abcdef0123456789abcdef01234567", 2, "{k}:tomb", "k", "token", int64(8000)}
	e.EvalPrepared(ctx, "src", args) // the number's text is memoised
	if n := testing.AllocsPerRun(100, func() {
		if _, err := e.EvalPrepared(ctx, "src", args); err != nil {
			t.Fatal(err)
		}
	}); n > 3 {
		t.Errorf("EvalPrepared: %v allocations, want 3", n)
	}
}
