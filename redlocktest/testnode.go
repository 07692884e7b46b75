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
// server is not on PATH) follow the redlock.Node contract: reply
// conventions, script caching and EVAL fallback, error replies, context
// bounds, and every ability the Node claims in its redlock.Abilities.
//
// newNode is called many times, also several times for one address; each
// Node it returns should be closed with t.Cleanup (the Close check relies
// on it: the cleanups of a subtest close the Nodes made in it). TestNode
// runs its checks as subtests, one after the other, on three masters:
//
//   - Addr: not empty, stable, different for different masters.
//   - Replies: Do returns a nil reply as untyped nil, a status reply as a
//     string (redlock reads SET's grant as the string "OK"), an integer as
//     int64, a bulk string as []byte or string (redlock accepts both).
//   - ErrorReplies: a Redis error reply (WRONGTYPE, an unknown command) is
//     an error with the server's message, not a context error, and the
//     next call on the Node gets its own reply.
//   - Eval, and EvalPrepared when the Node has Abilities.EvalPrepared:
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
//   - NoResend: a command whose reply is lost (the connection closed
//     after the master ran it) fails, and is not sent again.
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
//   - Async, when the Node has Abilities.EvalAsync: it runs done exactly
//     once with what EvalPrepared returns (the EVAL fallback included),
//     and calls to a frozen master complete eventually, with or without a
//     reply.
//   - Subscriber, when the Node has Abilities.Subscribe: a message
//     published after Subscribe returned reaches every registration of its
//     channel and no other; once unsubscribe returned nothing more is sent
//     on the Go channel and the master forgets the subscription; Subscribe
//     returns when its context ends (cancelled, or a frozen master); a
//     subscription lasts until unsubscribe, across a restart of the master.
//   - Locker: a redlock.Locker over three Nodes, with the default Config
//     (the restart guard on, which needs Abilities.Identity), locks,
//     excludes, extends and unlocks, and a waiter in another Locker wakes
//     on the release announced by the masters (when the Nodes have
//     Abilities.Subscribe; otherwise it polls).
//   - Metadata: a lock taken WithMetadata through Lockers over the Nodes
//     is read back with its record by Locker.Holder in another Locker;
//     SetMetadata replaces it; it is gone after Unlock.
//   - Election: two candidates and an observer, each in a Locker of its
//     own: the second leads once the first resigns, in a greater term,
//     and the observer sees both, and a proclaimed value, in term order.
//   - Close: 20 times, a process locks, unlocks, closes its Locker
//     (Locker.Close, which waits for the releases in flight), closes its
//     Nodes and their clients, and exits: no master holds the lock's key
//     afterwards, looked at at once.
//   - Identity, when the Node has Abilities.Identity: it never blocks;
//     once a call got the master's reply, it knows the master's run id,
//     start, version and persistence as INFO gives them; after the master
//     restarts, the first call (Do, and Eval) that gets a reply comes with
//     the new run id known.
//   - Confirm, when the Node has Abilities.Confirm: it writes the probe key
//     it is given and returns the counts the master acknowledged (WAIT of
//     no replica; WAITAOF without AOF is an error); a confirmation asked
//     of the process before a restart of the master, and made by the new
//     one, fails with nodeutil.ErrMasterChanged; the next one succeeds.
//
// Identity and Confirm run last: they restart masters, which the restart
// guard then holds back. Masters that name no run id in INFO (in-memory
// ones) skip what needs it, and the suite's Lockers then run with the
// guard off. The bounds are generous (seconds): they catch a call that
// waits for a dead master, not a slow machine.
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
