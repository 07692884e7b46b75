package redlocktest

import (
	"os/exec"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest/internal/nodetest"
)

// TestNode checks that the Nodes newNode makes (one per address of a real
// redis-server master that TestNode starts itself on a free loopback port,
// or valkey-server with QUORUMLOCK_SERVER=valkey-server; it skips when the
// server is not on PATH) follow the redlock.Node
// contract: reply conventions, script caching and EVAL fallback, error
// replies, context bounds, and, when the Node is a redlock.Subscriber,
// subscription.
//
// newNode is called many times, also several times for one address; each
// Node it returns should be closed with t.Cleanup. TestNode runs its checks
// as subtests, one after the other, on three masters:
//
//   - Addr: not empty, stable, different for different masters.
//   - Replies: Do returns a nil reply as untyped nil, a status reply as a
//     string (redlock reads SET's grant as the string "OK"), an integer as
//     int64, a bulk string as []byte or string (redlock accepts both).
//   - ErrorReplies: a Redis error reply (WRONGTYPE, an unknown command) is
//     an error with the server's message, not a context error, and the
//     next call on the Node gets its own reply.
//   - Eval, and EvalPrepared when the Node is a redlock.PreparedEvaler:
//     the same reply conventions for scripts; a script unknown to the
//     master runs exactly once (EVALSHA, then EVAL), also after SCRIPT
//     FLUSH, and is cached by the master; a cached script goes as EVALSHA
//     only (read from INFO commandstats); redis.error_reply and a failing
//     redis.call come back as errors; the context checks below; concurrent
//     script calls get their own replies.
//   - EndedContext: a call with a cancelled context returns within a
//     bound, with an error matching context.Canceled, and is applied at
//     most once.
//   - FrozenMaster: a call to a master stopped with SIGSTOP (it accepts
//     connections and answers nothing) returns with an error within a
//     bound of its context's deadline, through a connected Node and a
//     fresh one, and the Node answers again once the master resumes.
//   - Concurrent: concurrent calls on one Node get their own replies.
//   - LateNoScript (for each script path): a script that the master
//     answers NOSCRIPT after its caller gave up still goes again as EVAL,
//     so that a late release still runs.
//   - LateAcquire: a Locker over three Nodes, one behind a proxy that
//     holds the acquire back past the node timeout and past the Node's own
//     timeouts (NewDelayer), leaves no lock on that master after a failed
//     attempt or an Unlock: the release may overtake the acquire (on
//     another connection, after a reconnect), and the tombstone it leaves
//     refuses the acquire. The Node must send each command once and never
//     drop the release's EVAL fallback; the order is up to it.
//   - Async, when the Node is a redlock.AsyncNode: EvalPreparedAsync runs
//     done exactly once with what EvalPrepared returns (the EVAL fallback
//     included), and calls to a frozen master complete eventually, with or
//     without a reply.
//   - Subscriber, when the Node is a redlock.Subscriber: a message
//     published after Subscribe returned reaches every registration of its
//     channel and no other; once unsubscribe returned nothing more is sent
//     on the Go channel and the master forgets the subscription; Subscribe
//     returns when its context ends (cancelled, or a frozen master); a
//     subscription lasts until unsubscribe, across a restart of the master.
//   - Locker: a redlock.Locker over three Nodes locks, excludes, extends
//     and unlocks, and a waiter in another Locker wakes on the release
//     announced by the masters (when the Nodes are Subscribers; otherwise
//     it polls).
//
// The bounds are generous (seconds): they catch a call that waits for a
// dead master, not a slow machine.
func TestNode(t *testing.T, newNode func(t *testing.T, addr string) redlock.Node) {
	t.Helper()
	bin := redisproc.DefaultBinary()
	if _, err := exec.LookPath(bin); err != nil {
		t.Skipf("redlocktest: %s is not on PATH (install it, e.g. apt-get install -y redis-server): %v", bin, err)
	}
	nodetest.Run(t, nodetest.Backend{Name: bin, Start: startServers}, newNode)
}

// startServers starts n redis-server masters without persistence.
func startServers(t *testing.T, n int) []nodetest.Master {
	t.Helper()
	servers := redistest.Start(t, n, redisproc.Options{})
	masters := make([]nodetest.Master, n)
	for i, s := range servers {
		masters[i] = server{s}
	}
	return masters
}

// server is a redis-server process as a nodetest.Master.
type server struct{ s *redisproc.Server }

func (s server) Addr() string { return s.s.Addr() }

// Freeze stops the process with SIGSTOP.
func (s server) Freeze() (func(), error) {
	if err := s.s.Pause(); err != nil {
		return nil, err
	}
	return func() { s.s.Resume() }, nil
}

// Restart kills the process and starts it again, empty, on the same port.
func (s server) Restart() error { return s.s.Restart(0 * time.Second) }
