package pubsub

import "context"

// Conn is one pub/sub connection to a master, as a client library provides
// it: what a Registry needs from the client, and all it needs.
//
// The Registry calls Subscribe, Unsubscribe and Ping (when the Conn is a
// Pinger) from one goroutine, its writer, and Receive from another, its
// reader, so a connection that allows one writer and one reader at a time
// (redigo's rule) needs no lock of its own. It calls Close exactly once,
// from any goroutine, possibly while Receive or a send is in progress.
type Conn interface {
	// Subscribe sends SUBSCRIBE for channels (at least one). It need not
	// wait for the master's confirmations: those come from Receive, one
	// Subscribed event per channel, in the order of the commands. ctx ends
	// when the connection is no longer wanted.
	Subscribe(ctx context.Context, channels ...string) error
	// Unsubscribe sends UNSUBSCRIBE for channels (at least one); the
	// master's confirmations come from Receive as Unsubscribed events.
	Unsubscribe(ctx context.Context, channels ...string) error
	// Receive blocks until the master sends something and returns it. An
	// error means that the connection is broken: the Registry closes it
	// and dials another. After Close, Receive must return an error.
	Receive() (Event, error)
	// Close closes the connection and ends a Receive in progress. It must
	// not wait for a master that does not answer beyond the client's own
	// timeouts.
	Close() error
}

// Pinger is an optional ability of a Conn: a health check. The Registry
// pings a connection with subscriptions every Config.PingPeriod, and
// closes and redials one from which nothing (no Pong, no other event) was
// received between two pings: a master that is frozen or cut off keeps
// the TCP connection open and answers nothing. A Conn whose client checks
// its connections itself need not be a Pinger.
type Pinger interface {
	// Ping sends PING on the subscribed connection; the master's answer
	// comes from Receive as a Pong event.
	Ping(ctx context.Context) error
}

// Kind says what an Event is.
type Kind int

// The kinds of Event.
const (
	// Message is a message published on Event.Channel.
	Message Kind = iota + 1
	// Subscribed confirms a SUBSCRIBE of Event.Channel.
	Subscribed
	// Unsubscribed confirms an UNSUBSCRIBE of Event.Channel.
	Unsubscribed
	// Pong answers a Ping; Event.Channel is empty.
	Pong
)

// Event is one thing the master sent on a pub/sub connection.
type Event struct {
	Kind    Kind
	Channel string
}
