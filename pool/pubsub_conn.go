package pool

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/pubsub"
)

// psConn is a redigo connection as a pubsub.Conn: the Registry's writer
// is the only caller of Send and Flush, its reader the only caller of
// Receive, which is redigo's one-writer/one-reader rule.
type psConn struct{ psc redis.PubSubConn }

var _ pubsub.Pinger = psConn{}

func (c psConn) Subscribe(_ context.Context, channels ...string) error {
	return c.send("SUBSCRIBE", channels)
}

func (c psConn) Unsubscribe(_ context.Context, channels ...string) error {
	return c.send("UNSUBSCRIBE", channels)
}

func (c psConn) send(cmd string, channels []string) error {
	args := make([]any, len(channels))
	for i, ch := range channels {
		args[i] = ch
	}
	if err := c.psc.Conn.Send(cmd, args...); err != nil {
		return err
	}
	return c.psc.Conn.Flush()
}

// Ping sends a PING, answered on a subscribed connection by a pub/sub
// "pong" reply.
func (c psConn) Ping(context.Context) error { return c.psc.Ping("") }

// Receive reads the next reply without a deadline: a connection's read
// timeout, if its Config has one, does not apply to a subscriber that may
// hear nothing for hours. The Registry's health PINGs find a dead master.
func (c psConn) Receive() (pubsub.Event, error) {
	for {
		switch v := c.psc.ReceiveWithTimeout(0).(type) {
		case redis.Message:
			return pubsub.Event{Kind: pubsub.Message, Channel: v.Channel}, nil
		case redis.Subscription:
			switch v.Kind {
			case "subscribe":
				return pubsub.Event{Kind: pubsub.Subscribed, Channel: v.Channel}, nil
			case "unsubscribe":
				return pubsub.Event{Kind: pubsub.Unsubscribed, Channel: v.Channel}, nil
			}
		case redis.Pong:
			return pubsub.Event{Kind: pubsub.Pong}, nil
		case error:
			return pubsub.Event{}, v
		default:
			return pubsub.Event{}, fmt.Errorf("pool: unexpected pub/sub reply %T", v)
		}
	}
}

func (c psConn) Close() error { return c.psc.Conn.Close() }
