package goredis

import (
	"context"
	"fmt"

	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/redis/go-redis/v9"
)

// Wake on release: the Node's pubsub.Registry shares one go-redis PubSub
// (one connection) among every registration. go-redis would redial and
// resubscribe a PubSub by itself; the Registry does it instead, with a
// new PubSub, so that it knows when messages may have been lost and
// wakes the waiters.

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
		return nil, fmt.Errorf("goredis: %s: %w", n.addr, err)
	}
	return unsubscribe, nil
}

// dialPubSub is the Registry's Dial: a new PubSub, which connects at its
// first command (or Receive) under the client's DialTimeout.
func (n *Node) dialPubSub(ctx context.Context) (pubsub.Conn, error) {
	return psConn{n.c.Subscribe(ctx)}, nil
}

// psConn is a go-redis PubSub as a pubsub.Conn.
type psConn struct{ ps *redis.PubSub }

var _ pubsub.Pinger = psConn{}

func (c psConn) Subscribe(ctx context.Context, channels ...string) error {
	return c.ps.Subscribe(ctx, channels...)
}

func (c psConn) Unsubscribe(ctx context.Context, channels ...string) error {
	return c.ps.Unsubscribe(ctx, channels...)
}

func (c psConn) Ping(ctx context.Context) error { return c.ps.Ping(ctx) }

// Receive reads the next message without a deadline; go-redis reconnects
// a PubSub whose read failed at its next use, which the Registry never
// makes: it closes this one and dials another.
func (c psConn) Receive() (pubsub.Event, error) {
	for {
		msg, err := c.ps.Receive(context.Background())
		if err != nil {
			return pubsub.Event{}, err
		}
		switch m := msg.(type) {
		case *redis.Message:
			return pubsub.Event{Kind: pubsub.Message, Channel: m.Channel}, nil
		case *redis.Subscription:
			switch m.Kind {
			case "subscribe":
				return pubsub.Event{Kind: pubsub.Subscribed, Channel: m.Channel}, nil
			case "unsubscribe":
				return pubsub.Event{Kind: pubsub.Unsubscribed, Channel: m.Channel}, nil
			}
		case *redis.Pong:
			return pubsub.Event{Kind: pubsub.Pong}, nil
		}
	}
}

func (c psConn) Close() error { return c.ps.Close() }
