package nodeutil_test

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
)

func TestFormatArg(t *testing.T) {
	type stringer struct{ s string }
	for _, tc := range []struct {
		arg  any
		want string
	}{
		{"s", "s"}, {[]byte("b"), "b"}, {7, "7"}, {int64(-8), "-8"}, {int32(9), "9"},
		{uint(10), "10"}, {uint64(11), "11"}, {uint32(12), "12"}, {0.5, "0.5"},
		{1e21, "1e+21"}, {true, "1"}, {false, "0"}, {nil, ""}, {stringer{"x"}, "{x}"},
	} {
		if got := nodeutil.FormatArg(tc.arg); got != tc.want {
			t.Errorf("FormatArg(%#v) = %q, want %q", tc.arg, got, tc.want)
		}
	}
	if got := nodeutil.AppendArgs([]string{"SET"}, []any{"k", 1}); len(got) != 3 || got[2] != "1" {
		t.Errorf("AppendArgs = %q", got)
	}
	// Integers' text is memoised: twice over, values that share a slot
	// or not, each reads as strconv writes it.
	for range 2 {
		for i := int64(-300); i < 3000; i += 7 {
			for _, v := range []int64{i, i * 1e6, math.MaxInt64 - i, math.MinInt64 + i} {
				if got, want := nodeutil.FormatArg(v), strconv.FormatInt(v, 10); got != want {
					t.Fatalf("FormatArg(int64(%d)) = %q", v, got)
				}
				if got, want := nodeutil.FormatArg(int(v)), strconv.Itoa(int(v)); got != want {
					t.Fatalf("FormatArg(%d) = %q", v, got)
				}
			}
		}
	}
}

func TestReplyMessage(t *testing.T) {
	for msg, want := range map[string]string{
		"unknown command 'NOPE'":        "ERR unknown command 'NOPE'",
		"ERR unknown command":           "ERR unknown command",
		"WRONGTYPE Operation against":   "WRONGTYPE Operation against",
		"NOSCRIPT No matching script":   "NOSCRIPT No matching script",
		"CROSSSLOT Keys in request":     "CROSSSLOT Keys in request",
		"Error running script":          "ERR Error running script",
		"user_script:1: Script attempt": "ERR user_script:1: Script attempt",
		"":                              "ERR ",
	} {
		if got := nodeutil.ReplyMessage(msg); got != want {
			t.Errorf("ReplyMessage(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestSplitPrepared(t *testing.T) {
	hash, keys, args, err := nodeutil.SplitPrepared([]any{"abc", 2, "k1", "k2", 5, "x"})
	if err != nil || hash != "abc" || len(keys) != 2 || keys[1] != "k2" || len(args) != 2 || args[0] != "5" {
		t.Errorf("SplitPrepared = %q, %q, %q, %v", hash, keys, args, err)
	}
	for _, bad := range [][]any{{"abc"}, {"abc", 3, "k"}, {"abc", -1}, {"abc", "x"}} {
		if _, _, _, err := nodeutil.SplitPrepared(bad); err == nil {
			t.Errorf("SplitPrepared(%v): no error", bad)
		}
	}
}

// client is a value that Lazy makes, and that Close must close.
type client struct{ closed atomic.Bool }

func TestLazyMakesOnceForConcurrentCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var makes atomic.Int32
		l := nodeutil.NewLazy(func() (*client, error) {
			makes.Add(1)
			time.Sleep(time.Second) // a connection's set-up
			return &client{}, nil
		})
		var wg sync.WaitGroup
		got := make([]*client, 8)
		for i := range got {
			wg.Go(func() {
				c, err := l.Get(t.Context())
				if err != nil {
					t.Error(err)
				}
				got[i] = c
			})
		}
		wg.Wait()
		if makes.Load() != 1 {
			t.Errorf("%d attempts for concurrent callers, want 1", makes.Load())
		}
		for _, c := range got {
			if c != got[0] {
				t.Fatal("callers got different values")
			}
		}
		l.Close(func(c *client) { c.closed.Store(true) })
		if !got[0].closed.Load() {
			t.Error("Close did not close the value")
		}
		if _, err := l.Get(t.Context()); !errors.Is(err, nodeutil.ErrClosed) {
			t.Errorf("Get after Close: %v, want ErrClosed", err)
		}
	})
}

func TestLazyRetriesAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("connection refused")
		var down atomic.Bool
		down.Store(true)
		l := nodeutil.NewLazy(func() (*client, error) {
			if down.Load() {
				return nil, refused
			}
			return &client{}, nil
		})
		defer l.Close(func(*client) {})
		if _, err := l.Get(t.Context()); !errors.Is(err, refused) {
			t.Fatalf("Get while the master is down: %v, want its error", err)
		}
		down.Store(false)
		if c, err := l.Get(t.Context()); err != nil || c == nil {
			t.Fatalf("Get once the master is up: %v, %v", c, err)
		}
	})
}

// A caller's context bounds its wait, not the attempt, whose value serves
// the next caller.
func TestLazyCallerGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("connection refused")
		var attempts atomic.Int32
		l := nodeutil.NewLazy(func() (*client, error) {
			if attempts.Add(1) == 1 {
				return nil, refused
			}
			time.Sleep(time.Second)
			return &client{}, nil
		})
		l.Get(t.Context()) // the first attempt fails
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		_, err := l.Get(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, refused) {
			t.Fatalf("Get that gave up: %v, want DeadlineExceeded with the last attempt's error", err)
		}
		if c, err := l.Get(t.Context()); err != nil || c == nil || attempts.Load() != 2 {
			t.Fatalf("Get after the attempt went on: %v, %v after %d attempts, want the second attempt's value", c, err, attempts.Load())
		}
		l.Close(func(*client) {})
	})
}

// A value made after Close is closed too.
func TestLazyCloseDuringAttempt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		made := make(chan *client, 1)
		l := nodeutil.NewLazy(func() (*client, error) {
			time.Sleep(time.Second)
			c := &client{}
			made <- c
			return c, nil
		})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		go l.Get(context.Background())
		synctest.Wait()
		l.Close(func(c *client) { c.closed.Store(true) })
		if c := <-made; !c.closed.Load() {
			t.Error("a value made after Close was not closed")
		}
		if _, err := l.Get(ctx); !errors.Is(err, nodeutil.ErrClosed) {
			t.Errorf("Get after Close: %v, want ErrClosed", err)
		}
	})
}

func TestClientOptions(t *testing.T) {
	for name, o := range map[string]nodeutil.ClientOptions{
		"conn lifetime": {InitAddress: []string{"a:1"}, ConnLifetime: time.Minute},
		"to replicas":   {InitAddress: []string{"a:1"}, ToReplicas: true},
	} {
		if err := o.Check(); !errors.Is(err, nodeutil.ErrUnsafeOption) {
			t.Errorf("Check with %s: %v, want ErrUnsafeOption", name, err)
		}
	}
	if err := (nodeutil.ClientOptions{}).Check(); err == nil {
		t.Error("Check without an address: no error")
	}
	if err := (nodeutil.ClientOptions{InitAddress: []string{"a:1"}}).Check(); err != nil {
		t.Errorf("Check of safe options: %v", err)
	}
	for _, tc := range []struct {
		o    nodeutil.ClientOptions
		want string
	}{
		{nodeutil.ClientOptions{InitAddress: []string{"a:1"}}, "a:1"},
		{nodeutil.ClientOptions{InitAddress: []string{"b:1", "a:1"}}, "cluster:a:1,b:1"},
		{nodeutil.ClientOptions{InitAddress: []string{"s:1", "s:2"}, MasterSet: "m"}, "sentinel:m@s:1,s:2"},
	} {
		if got := tc.o.Name(); got != tc.want {
			t.Errorf("Name() = %q, want %q", got, tc.want)
		}
	}
}

func TestClientName(t *testing.T) {
	c := &client{}
	if got := nodeutil.ClientName(c, "standalone", []string{"a:1"}); got != "a:1" {
		t.Errorf("standalone: %q", got)
	}
	if got := nodeutil.ClientName(c, "cluster", []string{"b:1", "a:1"}); got != "cluster:a:1,b:1" {
		t.Errorf("cluster: %q", got)
	}
	if got, other := nodeutil.ClientName(c, "sentinel", nil), nodeutil.ClientName(&client{}, "sentinel", nil); got == other || !strings.HasPrefix(got, "*nodeutil_test.client@0x") {
		t.Errorf("sentinel: %q and %q, want the type and distinct pointers", got, other)
	}
}
