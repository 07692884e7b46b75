// Package pubsub is wake on release for any Redis client: a Registry
// shares one pub/sub connection to a master among every goroutine that
// waits for messages on its channels, and wakes each of them with a
// non-blocking send on a Go channel. It implements the redlock.Subscriber
// ability, so that a redlock.Node over a client library needs only to say
// how its client opens a pub/sub connection, sends SUBSCRIBE and
// UNSUBSCRIBE, and receives what the master sends back (a Conn); the
// registrations, the subscription state on the connection, the health
// check, the redials and the wake-up after a reconnect are the Registry's.
//
// *pool.Node and the go-redis, rueidis and valkey-go adapters all use it;
// a Node for another client does the same:
//
//	type Node struct {
//		// ...
//		subs *pubsub.Registry
//	}
//
//	func NewNode(c *myclient.Client) *Node {
//		n := &Node{ /* ... */ }
//		n.subs = pubsub.New(pubsub.Config{Dial: func(ctx context.Context) (pubsub.Conn, error) {
//			return newConn(ctx, c) // a Conn over one of c's pub/sub connections
//		}})
//		return n
//	}
//
//	func (n *Node) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (func(), error) {
//		return n.subs.Subscribe(ctx, channel, ch)
//	}
//
//	func (n *Node) Close() error { return n.subs.Close() }
//
// The package depends on the standard library only.
package pubsub
