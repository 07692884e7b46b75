package pubsub_test

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/quorumlock/quorumlock/pubsub"
)

func TestFeed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := pubsub.NewFeed()
		go func() { // a client's hook goroutine
			f.Push(pubsub.Event{Kind: pubsub.Subscribed, Channel: "a"})
			f.Push(pubsub.Event{Kind: pubsub.Message, Channel: "a"})
		}()
		for _, want := range []pubsub.Kind{pubsub.Subscribed, pubsub.Message} {
			if ev, err := f.Receive(nil); err != nil || ev.Kind != want || ev.Channel != "a" {
				t.Fatalf("Receive = %+v, %v; want a %v event of a", ev, err, want)
			}
		}

		broken := make(chan error, 1)
		reset := errors.New("connection reset")
		broken <- reset
		if _, err := f.Receive(broken); !errors.Is(err, reset) {
			t.Errorf("Receive on a broken connection: %v, want its error", err)
		}
		close(broken)
		if _, err := f.Receive(broken); err == nil {
			t.Error("Receive on a closed broken channel: no error")
		}

		pushed := make(chan struct{})
		go func() { f.Push(pubsub.Event{Kind: pubsub.Message, Channel: "b"}); close(pushed) }()
		synctest.Wait()
		f.Close()
		f.Close()
		<-pushed // Close releases a Push nobody takes
		if _, err := f.Receive(nil); !errors.Is(err, pubsub.ErrClosed) {
			t.Errorf("Receive after Close: %v, want ErrClosed", err)
		}
	})
}
