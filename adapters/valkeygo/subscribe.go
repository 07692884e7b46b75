package valkeygo

import (
	"context"
	"fmt"

	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/valkey-io/valkey-go"
)

// Subscribe registers ch to receive a non-blocking send for every message
// published on channel at this master, until unsubscribe is called
// (idempotent). It returns once the master confirmed the subscription, or
// with an error matching ctx.Err() when ctx ends first (with the last
// connection error, if any); on error nothing stays registered. A full ch
// misses the message, so a waiter must also poll. After a reconnect every
// registration of a channel is woken once, since messages may have been
// lost. See pubsub.Registry.Subscribe.
func (n *Node) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	unsubscribe, err = n.subs.Subscribe(ctx, channel, ch)
	if err != nil {
		return nil, fmt.Errorf("valkeygo: %s: %w", n.Addr(), err)
	}
	return unsubscribe, nil
}

// dialPubSub is the Registry's Dial: a dedicated connection of the client
// (never its shared pipelined ones), whose pub/sub hooks feed the
// Registry. SUBSCRIBE and UNSUBSCRIBE return once the master confirmed
// them; the confirmations reach the hooks too, which is what the Registry
// reads.
func (n *Node) dialPubSub(ctx context.Context) (pubsub.Conn, error) {
	c, err := n.exec.Client(ctx)
	if err != nil {
		return nil, err
	}
	dc, release := c.Dedicate()
	conn := pubsub.NewHookConn()
	conn.Broken = dc.SetPubSubHooks(valkey.PubSubHooks{
		OnMessage:      func(m valkey.PubSubMessage) { conn.Message(m.Channel) },
		OnSubscription: func(s valkey.PubSubSubscription) { conn.Subscription(s.Kind, s.Channel) },
	})
	conn.Send = func(ctx context.Context, subscribe bool, channels []string) error {
		if subscribe {
			return dc.Do(ctx, dc.B().Subscribe().Channel(channels...).Build()).Error()
		}
		return dc.Do(ctx, dc.B().Unsubscribe().Channel(channels...).Build()).Error()
	}
	conn.Release = func() {
		dc.Close()
		release()
	}
	return conn, nil
}
