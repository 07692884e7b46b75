package rueidis

import (
	"context"
	"fmt"

	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/redis/rueidis"
)

// Wake on release: the Node's pubsub.Registry shares one dedicated rueidis
// connection (Dedicate, never the client's shared pipelined connections)
// among every registration; rueidis's pub/sub hooks feed what the master
// sends to the Registry's reader.

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
		return nil, fmt.Errorf("rueidis: %s: %w", n.Addr(), err)
	}
	return unsubscribe, nil
}

// dialPubSub is the Registry's Dial: a dedicated connection of the client
// with hooks that feed the Registry.
func (n *Node) dialPubSub(ctx context.Context) (pubsub.Conn, error) {
	c, err := n.exec.Client(ctx)
	if err != nil {
		return nil, err
	}
	dc, release := c.Dedicate()
	conn := &psConn{dc: dc, release: release, feed: pubsub.NewFeed()}
	conn.broken = dc.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage: func(m rueidis.PubSubMessage) {
			conn.feed.Push(pubsub.Event{Kind: pubsub.Message, Channel: m.Channel})
		},
		OnSubscription: func(s rueidis.PubSubSubscription) {
			switch s.Kind {
			case "subscribe":
				conn.feed.Push(pubsub.Event{Kind: pubsub.Subscribed, Channel: s.Channel})
			case "unsubscribe":
				conn.feed.Push(pubsub.Event{Kind: pubsub.Unsubscribed, Channel: s.Channel})
			}
		},
	})
	return conn, nil
}

// psConn is a dedicated rueidis connection as a pubsub.Conn. SUBSCRIBE and
// UNSUBSCRIBE return once the master confirmed them, on the Registry's
// writer; the confirmations also reach the hooks, which is what the
// Registry reads.
type psConn struct {
	dc      rueidis.DedicatedClient
	release func()
	feed    *pubsub.Feed
	broken  <-chan error
}

func (c *psConn) Subscribe(ctx context.Context, channels ...string) error {
	return c.dc.Do(ctx, c.dc.B().Subscribe().Channel(channels...).Build()).Error()
}

func (c *psConn) Unsubscribe(ctx context.Context, channels ...string) error {
	return c.dc.Do(ctx, c.dc.B().Unsubscribe().Channel(channels...).Build()).Error()
}

func (c *psConn) Receive() (pubsub.Event, error) { return c.feed.Receive(c.broken) }

func (c *psConn) Close() error {
	c.feed.Close()
	c.dc.Close()
	c.release()
	return nil
}
