// Package nodetest is the redlock.Node conformance suite behind
// redlocktest.TestNode, written against an abstract Master so that it can
// run against real redis-server processes (redlocktest) and against the
// in-memory masters of redlocktest/inmem alike.
package nodetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// ErrUnsupported is returned by a Master's Freeze or Restart when the master
// cannot do it; the checks that need it are skipped with the reason.
var ErrUnsupported = errors.ErrUnsupported

// Master is one Redis master under the suite's control.
type Master interface {
	// Addr is the "host:port" that newNode is given.
	Addr() string
	// Freeze makes the master accept connections and answer nothing until
	// thaw is called.
	Freeze() (thaw func(), err error)
	// Restart stops the master and starts it again on the same address,
	// closing every connection to it.
	Restart() error
}

// Backend names the masters the suite runs against, for skip messages.
type Backend struct {
	Name string
	// Start starts n masters and stops them at the end of t.
	Start func(t *testing.T, n int) []Master
}

// Bound is how long after its context ends a call may still take to
// return. It is generous: it catches a call that waits for a frozen master,
// not a slow machine.
const Bound = 2 * time.Second

// patience bounds how long a check waits for something that must happen
// (a message, a resubscription after a restart).
const patience = 15 * time.Second

// Run runs every check against the Nodes newNode makes for masters that b
// starts. Checks run one after the other: some freeze or restart a master.
func Run(t *testing.T, b Backend, newNode func(t *testing.T, addr string) redlock.Node) {
	t.Helper()
	masters := b.Start(t, 3)
	s := &suite{b: b, masters: masters, newNode: newNode}
	if s.control(t, 0).runID() == "" {
		t.Logf("%s names no run_id in INFO server: the suite's Lockers run without the restart guard", b.Name)
		s.noRunID = true
	}
	t.Run("Addr", s.testAddr)
	t.Run("Replies", s.testReplies)
	t.Run("ErrorReplies", s.testErrorReplies)
	for _, e := range s.evalers(t) {
		t.Run(e.name, func(t *testing.T) {
			t.Run("Replies", func(t *testing.T) { s.testEvalReplies(t, e) })
			t.Run("CacheAndFallback", func(t *testing.T) { s.testEvalFallback(t, e) })
			t.Run("UsesEVALSHA", func(t *testing.T) { s.testUsesEvalsha(t, e) })
			t.Run("ScriptErrors", func(t *testing.T) { s.testScriptErrors(t, e) })
			t.Run("EndedContext", func(t *testing.T) { s.testEvalEndedContext(t, e) })
			t.Run("FrozenMaster", func(t *testing.T) { s.testEvalFrozen(t, e) })
			t.Run("Concurrent", func(t *testing.T) { s.testEvalConcurrent(t, e) })
			t.Run("LateNoScript", func(t *testing.T) { s.testLateNoScript(t, e) })
		})
	}
	t.Run("EndedContext", s.testEndedContext)
	t.Run("FrozenMaster", s.testFrozen)
	t.Run("Concurrent", s.testConcurrent)
	t.Run("NoResend", s.testNoResend)
	t.Run("LateAcquire", s.testLateAcquire)
	t.Run("Async", s.testAsync)
	t.Run("Subscriber", s.testSubscriber)
	t.Run("Locker", s.testLocker)
	t.Run("Close", s.testClose)
	t.Run("Metadata", func(t *testing.T) { checkMetadata(t, s.newLocker(t)) })
	t.Run("Election", func(t *testing.T) { checkElection(t, s.newLocker(t)) })
	// Last: they restart masters, which the restart guard then holds back
	// (a Locker's record of them is gone).
	t.Run("Identity", s.testIdentity)
	t.Run("Confirm", s.testConfirm)
}

type suite struct {
	b       Backend
	masters []Master
	newNode func(t *testing.T, addr string) redlock.Node
	noRunID bool // the masters name no run id (in-memory ones)
}

// config is cfg for the suite's Lockers: the restart guard off when the
// masters cannot say who they are.
func (s *suite) config(cfg redlock.Config) redlock.Config {
	if s.noRunID {
		cfg.RestartGuard = -1
	}
	return cfg
}

// newLocker returns a function that makes a Locker over Nodes of its own
// for the masters (as another process would), with the default Config.
func (s *suite) newLocker(t *testing.T) func() *redlock.Locker {
	return func() *redlock.Locker {
		nodes := make([]redlock.Node, len(s.masters))
		for i := range nodes {
			nodes[i] = s.node(t, i)
		}
		l, err := redlock.New(nodes, s.config(redlock.Config{NodeTimeout: 500 * time.Millisecond}))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
}

// node makes a Node for master i.
func (s *suite) node(t *testing.T, i int) redlock.Node {
	t.Helper()
	n := s.newNode(t, s.masters[i].Addr())
	if n == nil {
		t.Fatalf("newNode(%s) returned nil", s.masters[i].Addr())
	}
	return n
}

// key returns a key no other check uses.
func key(t *testing.T) string {
	var b [6]byte
	rand.Read(b[:])
	return "redlocktest:" + strings.ReplaceAll(t.Name(), "/", ":") + ":" + hex.EncodeToString(b[:])
}

// ctx is a context for a call that must succeed.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), patience)
	t.Cleanup(cancel)
	return c
}

// control is a connection of the suite's own to master i, to look at what
// the Node did and to set things up behind its back.
type control struct {
	t *testing.T
	c redis.Conn
}

func (s *suite) control(t *testing.T, i int) *control {
	t.Helper()
	c, err := redis.Dial("tcp", s.masters[i].Addr(), redis.DialConnectTimeout(5*time.Second),
		redis.DialReadTimeout(patience), redis.DialWriteTimeout(patience))
	if err != nil {
		t.Fatalf("control connection to %s: %v", s.masters[i].Addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	return &control{t: t, c: c}
}

// do runs a command that must succeed.
func (c *control) do(cmd string, args ...any) any {
	c.t.Helper()
	r, err := c.c.Do(cmd, args...)
	if err != nil {
		c.t.Fatalf("control %s: %v", cmd, err)
	}
	return r
}

func (c *control) str(cmd string, args ...any) string {
	c.t.Helper()
	s, err := redis.String(c.do(cmd, args...), nil)
	if err != nil && !errors.Is(err, redis.ErrNil) {
		c.t.Fatalf("control %s: %v", cmd, err)
	}
	return s
}

func (c *control) int(cmd string, args ...any) int64 {
	c.t.Helper()
	n, err := redis.Int64(c.do(cmd, args...), nil)
	if err != nil {
		c.t.Fatalf("control %s: %v", cmd, err)
	}
	return n
}

// numsub is how many subscribers channel has on the master.
func (c *control) numsub(channel string) int64 {
	c.t.Helper()
	vs, err := redis.Values(c.do("PUBSUB", "NUMSUB", channel), nil)
	if err != nil || len(vs) != 2 {
		c.t.Fatalf("control PUBSUB NUMSUB: %v %v", vs, err)
	}
	n, _ := redis.Int64(vs[1], nil)
	return n
}

// eventually polls cond until it holds or patience runs out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, patience)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// await waits for a send on ch.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(patience):
		t.Fatalf("%s: nothing within %v", what, patience)
	}
}

// returnsWithin runs f and fails t when it takes longer than limit.
func returnsWithin(t *testing.T, limit time.Duration, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > limit {
		t.Errorf("%s returned after %v, want within %v", what, d, limit)
	}
}

// text is a bulk reply as text: redlock accepts []byte or string.
func text(reply any) (string, bool) {
	switch v := reply.(type) {
	case []byte:
		return string(v), true
	case string:
		return v, true
	}
	return "", false
}

// isCtxErr reports whether err is (or wraps) a context error.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
