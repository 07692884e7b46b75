package pubsub_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/quorumlock/quorumlock/pubsub"
)

func TestHookConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := pubsub.NewHookConn()
		var sent []string
		c.Send = func(_ context.Context, subscribe bool, channels []string) error {
			cmd := "UNSUBSCRIBE"
			if subscribe {
				cmd = "SUBSCRIBE"
			}
			sent = append(sent, cmd+" "+channels[0])
			go c.Subscription(map[bool]string{true: "subscribe", false: "unsubscribe"}[subscribe], channels[0])
			return nil
		}
		broken := make(chan error, 1)
		c.Broken = broken
		releases := 0
		c.Release = func() { releases++ }

		c.Subscribe(t.Context(), "a")
		if ev, err := c.Receive(); err != nil || ev != (pubsub.Event{Kind: pubsub.Subscribed, Channel: "a"}) {
			t.Fatalf("Receive = %+v, %v; want a's confirmation", ev, err)
		}
		go c.Message("a")
		if ev, err := c.Receive(); err != nil || ev != (pubsub.Event{Kind: pubsub.Message, Channel: "a"}) {
			t.Fatalf("Receive = %+v, %v; want a message on a", ev, err)
		}
		c.Unsubscribe(t.Context(), "a")
		if ev, err := c.Receive(); err != nil || ev.Kind != pubsub.Unsubscribed {
			t.Fatalf("Receive = %+v, %v; want a's unsubscribe confirmation", ev, err)
		}
		c.Subscription("psubscribe", "p*") // not ours: ignored, never waits
		if len(sent) != 2 {
			t.Errorf("sent %q", sent)
		}

		reset := errors.New("connection reset")
		broken <- reset
		if _, err := c.Receive(); !errors.Is(err, reset) {
			t.Errorf("Receive on a broken connection: %v, want its error", err)
		}

		hooked := make(chan struct{})
		go func() { c.Message("b"); close(hooked) }()
		synctest.Wait()
		c.Close()
		c.Close()
		<-hooked // Close releases a hook that waits
		if releases != 1 {
			t.Errorf("Release called %d times, want once", releases)
		}
		if _, err := c.Receive(); !errors.Is(err, pubsub.ErrClosed) {
			t.Errorf("Receive after Close: %v, want ErrClosed", err)
		}
	})
}
