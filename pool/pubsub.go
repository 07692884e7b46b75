package pool

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/pubsub"
)

// The pub/sub side of a Node: one shared subscriber connection per Node,
// multiplexing every channel that has at least one registration. The
// registrations, the subscription state, the health check and the redials
// are pubsub.Registry's; this package gives it redigo connections dialed
// with the Node's settings (pubsub_conn.go).

// errNodeClosed is the error of a call on a closed Node (its connections'
// set-up and pipeline use it too).
var errNodeClosed = errors.New("node closed")

// notifier is a Node's subscriber side. It knows the Node only through
// what it was given: the address (for errors) and a dial function.
type notifier struct {
	addr string
	reg  *pubsub.Registry
}

func newNotifier(addr string, dial func(ctx context.Context) (redis.Conn, error)) *notifier {
	return &notifier{addr: addr, reg: pubsub.New(pubsub.Config{
		Dial: func(ctx context.Context) (pubsub.Conn, error) {
			c, err := dial(ctx)
			if err != nil {
				return nil, err
			}
			return psConn{redis.PubSubConn{Conn: c}}, nil
		},
	})}
}

// Subscribe registers ch to receive a non-blocking send (struct{}{}) each
// time a message is published on channel at this master. It returns once
// the subscription is confirmed by the server (SUBSCRIBE reply received) or
// ctx ends. unsubscribe removes the registration (idempotent); when the
// last registration for a channel goes, the node UNSUBSCRIBEs it.
//
// All registrations of a Node share one pub/sub connection, dialed with the
// Node's address, credentials and TLS settings on the first Subscribe and
// closed when the last registration goes or the Node is closed. A full ch
// misses the message: the send never blocks, so a receiver that must not
// miss a release should also poll. The connection is health-checked with a
// PING every few seconds; when it breaks, it is redialed with backoff while
// any registration exists, every channel is subscribed again, and every
// registered ch then gets one wake-up, since messages may have been lost in
// between (see pubsub.Registry.Subscribe).
//
// On error nothing stays registered and unsubscribe is nil. A ctx error
// stays matchable with errors.Is(err, ctx.Err()); the error also carries the
// last connection error, if any (a wrong password, a refused dial).
// Neither Subscribe nor unsubscribe blocks on a frozen master beyond ctx.
func (n *Node) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	if n.addr == "" {
		return nil, fmt.Errorf("pool: subscribe %q: %w", channel, ErrNoAddr)
	}
	unsubscribe, err = n.notify.reg.Subscribe(ctx, channel, ch)
	if err != nil {
		return nil, fmt.Errorf("pool: %s: %w", n.addr, err)
	}
	return unsubscribe, nil
}

// close closes the pub/sub connection, if any, and waits for its
// goroutines; closing a connection ends its I/O at once.
func (nt *notifier) close() { nt.reg.Close() }
