package pubsub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/pubsub"
)

// The Registry's logic over an in-memory master (fake_test.go), in a
// synctest bubble: time is fake and advances only when every goroutine
// waits, so the health check and the redial backoff are tested without
// sleeping, and the bubble fails a test whose goroutines outlive it.

func subscribe(t *testing.T, r *pubsub.Registry, channel string, ch chan<- struct{}) func() {
	t.Helper()
	unsub, err := r.Subscribe(t.Context(), channel, ch)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", channel, err)
	}
	return unsub
}

// woken reports whether ch has a send waiting, and takes it.
func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestRegistrationsShareOneConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		a, b, o := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{}, 1)
		unsubA := subscribe(t, r, "c", a)
		unsubB := subscribe(t, r, "c", b)
		unsubO := subscribe(t, r, "other", o)
		if got := m.count("SUBSCRIBE c"); got != 1 {
			t.Errorf("%d SUBSCRIBE c for two registrations, want 1", got)
		}
		if got := m.publish("c"); got != 1 {
			t.Fatalf("PUBLISH c reached %d connections, want 1", got)
		}
		synctest.Wait()
		if !woken(a) || !woken(b) {
			t.Error("a registration of c was not woken")
		}
		if woken(o) {
			t.Error("a registration of another channel was woken")
		}

		unsubA()
		unsubA() // idempotent: must not remove b
		m.publish("c")
		synctest.Wait()
		if woken(a) || !woken(b) {
			t.Error("after a's unsubscribe: a woken or b not")
		}
		if got := m.count("UNSUBSCRIBE c"); got != 0 {
			t.Errorf("UNSUBSCRIBE c sent while b is registered")
		}

		unsubB()
		synctest.Wait()
		if got := m.count("UNSUBSCRIBE c"); got != 1 {
			t.Errorf("%d UNSUBSCRIBE c after its last registration went, want 1", got)
		}
		if got := m.open(); got != 1 {
			t.Errorf("%d open connections while other is registered, want 1", got)
		}
		unsubO()
		synctest.Wait()
		if got := m.open(); got != 0 {
			t.Errorf("%d open connections after the last unsubscribe, want 0", got)
		}
	})
}

func TestFullChannelDoesNotBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		full, other := make(chan struct{}), make(chan struct{}, 1)
		defer subscribe(t, r, "a", full)()
		defer subscribe(t, r, "b", other)()
		for range 3 {
			m.publish("a")
		}
		m.publish("b")
		<-other
	})
}

// A broken connection is redialed, every channel subscribed again, and
// each registration woken once, since messages may have been lost.
func TestReconnectResubscribesAndWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		ch := make(chan struct{}, 1)
		defer subscribe(t, r, "c", ch)()
		<-m.dialed
		m.breakConns()
		<-m.dialed
		<-ch // nothing was published: the wake-up after the reconnect
		if got := m.count("SUBSCRIBE c"); got != 2 {
			t.Errorf("%d SUBSCRIBE c, want 2 (one per connection)", got)
		}
		if got := m.publish("c"); got != 1 {
			t.Fatalf("PUBLISH after the reconnect reached %d connections, want 1", got)
		}
		<-ch
	})
}

func TestHealthCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		ch := make(chan struct{}, 1)
		defer subscribe(t, r, "c", ch)()
		<-m.dialed

		// A master that answers keeps its connection.
		time.Sleep(10 * pubsub.DefaultPingPeriod)
		if got := m.count("PING"); got < 9 {
			t.Errorf("%d PINGs in ten periods, want 10", got)
		}
		if len(m.dialed) != 0 {
			t.Fatal("a connection that answered its PINGs was replaced")
		}

		// A frozen one is replaced within two periods and a backoff.
		m.setFrozen(true)
		frozen := time.Now()
		<-m.dialed
		if d, limit := time.Since(frozen), 2*pubsub.DefaultPingPeriod+2*time.Second; d > limit {
			t.Errorf("frozen connection replaced after %v, want within %v", d, limit)
		}
		m.setFrozen(false)
		<-ch // subscribed again
	})
}

func TestSubscribeReportsConnectionError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		refused := errors.New("connection refused")
		m.setDialErr(refused)
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		unsub, err := r.Subscribe(ctx, "c", make(chan struct{}, 1))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, refused) || unsub != nil {
			t.Fatalf("Subscribe: %v, want context.DeadlineExceeded with the dial error", err)
		}
		if !strings.HasPrefix(err.Error(), "pubsub: ") {
			t.Errorf("error %q does not start with the package name", err)
		}

		// Once the master is reachable, the next Subscribe succeeds.
		m.setDialErr(nil)
		defer subscribe(t, r, "c", make(chan struct{}, 1))()
	})
}

// A frozen master holds neither Subscribe past its context, nor
// unsubscribe, nor Close.
func TestFrozenMaster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		m.setFrozen(true)
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, err := r.Subscribe(ctx, "a", make(chan struct{}, 1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Subscribe on a frozen master: %v, want context.DeadlineExceeded", err)
		}
		waiting := make(chan error, 1)
		go func() {
			_, err := r.Subscribe(context.Background(), "b", make(chan struct{}, 1))
			waiting <- err
		}()
		synctest.Wait()
		r.Close()
		if err := <-waiting; !errors.Is(err, pubsub.ErrClosed) {
			t.Errorf("Subscribe ended by Close: %v, want ErrClosed", err)
		}
		if got := m.open(); got != 0 {
			t.Errorf("%d open connections after Close, want 0", got)
		}
	})
}

// A channel whose UNSUBSCRIBE is unanswered is not subscribed: a new
// Subscribe waits for the confirmation of its own SUBSCRIBE.
func TestResubscribeWhileUnsubscribeInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		unsubA := subscribe(t, r, "a", make(chan struct{}, 1))
		defer subscribe(t, r, "b", make(chan struct{}, 1))() // keeps the connection
		m.setFrozen(true)
		unsubA()
		synctest.Wait()
		if got := m.count("UNSUBSCRIBE a"); got != 1 {
			t.Fatalf("%d UNSUBSCRIBE a, want 1", got)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, err := r.Subscribe(ctx, "a", make(chan struct{}, 1)); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Subscribe while the UNSUBSCRIBE is unanswered: %v, want context.DeadlineExceeded", err)
		}

		type result struct {
			unsub func()
			err   error
		}
		done := make(chan result, 1)
		ch := make(chan struct{}, 1)
		go func() {
			unsub, err := r.Subscribe(t.Context(), "a", ch)
			done <- result{unsub, err}
		}()
		synctest.Wait()
		m.setFrozen(false)
		res := <-done
		if res.err != nil {
			t.Fatal(res.err)
		}
		defer res.unsub()
		if got := m.publish("a"); got != 1 {
			t.Fatalf("PUBLISH a reached %d connections, want 1", got)
		}
		<-ch
	})
}

func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		var unsubs []func()
		for _, c := range []string{"a", "b", "c"} {
			unsubs = append(unsubs, subscribe(t, r, c, make(chan struct{}, 1)))
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if got := m.open(); got != 0 {
			t.Errorf("%d open connections after Close, want 0", got)
		}
		for _, unsub := range unsubs {
			unsub() // after Close: a no-op
		}
		if _, err := r.Subscribe(t.Context(), "a", make(chan struct{}, 1)); !errors.Is(err, pubsub.ErrClosed) {
			t.Errorf("Subscribe after Close: %v, want ErrClosed", err)
		}
	})
}

func TestSubscribeBadInput(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newMaster()
		r := pubsub.New(pubsub.Config{Dial: m.dial})
		defer r.Close()
		if _, err := r.Subscribe(t.Context(), "c", nil); err == nil {
			t.Error("Subscribe with a nil channel succeeded")
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := r.Subscribe(ctx, "c", make(chan struct{}, 1)); !errors.Is(err, context.Canceled) {
			t.Errorf("Subscribe with a cancelled context: %v, want context.Canceled", err)
		}
		if got := len(m.dialed); got != 0 {
			t.Errorf("%d dials for Subscribes that failed at once, want 0", got)
		}
	})
	defer func() {
		if recover() == nil {
			t.Error("New with a nil Dial did not panic")
		}
	}()
	pubsub.New(pubsub.Config{})
}
