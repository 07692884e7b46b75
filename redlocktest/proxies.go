package redlocktest

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlocktest/internal/nodetest"
)

// ReplyDropper is a TCP proxy to a Redis server for testing the rule that
// a command which may have reached a master is never sent again. It
// forwards everything, except that once a command containing its marker
// has gone to the server, it closes the client's connection when the
// server's reply arrives instead of forwarding it: the command ran, the
// client sees a broken connection. A Node that resends the command runs it
// twice. TestNode uses it for its NoResend check.
type ReplyDropper = nodetest.ReplyDropper

// NewReplyDropper starts a ReplyDropper to target on a free loopback port,
// dropping the reply to the first command that contains marker on each
// connection; it stops when tb ends.
func NewReplyDropper(tb testing.TB, target, marker string) *ReplyDropper {
	tb.Helper()
	return nodetest.NewReplyDropper(tb, target, marker)
}

// NewBlackHole returns the address of a listener that accepts connections
// and never answers, as a frozen master does; everything closes when tb
// ends.
func NewBlackHole(tb testing.TB) string {
	tb.Helper()
	return nodetest.NewBlackHole(tb)
}

// Delayer is a TCP proxy to a Redis server that holds the first chunk of
// bytes containing its marker back for a while on each connection (and
// what that connection sends after it), as a slow network would: the
// command reaches the master long after its caller gave up, also after the
// Node closed the connection. TestNode uses it for its LateAcquire check.
type Delayer = nodetest.Delayer

// NewDelayer starts a Delayer to target on a free loopback port, holding
// back the first chunk containing marker on each connection for delay; it
// stops when tb ends.
func NewDelayer(tb testing.TB, target, marker string, delay time.Duration) *Delayer {
	tb.Helper()
	return nodetest.NewDelayer(tb, target, marker, delay)
}
