package redlock

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"

	"github.com/quorumlock/quorumlock/quorum"
)

//go:embed scripts/*.lua
var scriptFiles embed.FS

var (
	releaseScript          = loadScript("release")
	extendScript           = loadScript("extend")
	fenceAcquireScript     = loadScript("fence_acquire")
	fenceRaiseScript       = loadScript("fence_raise")
	reentrantAcquireScript = loadScript("reentrant_acquire")
	reentrantExtendScript  = loadScript("reentrant_extend")
	reentrantReleaseScript = loadScript("reentrant_release")
	readAcquireScript      = loadScript("read_acquire")
	readExtendScript       = loadScript("read_extend")
	readReleaseScript      = loadScript("read_release")
	writeAcquireScript     = loadScript("write_acquire")
	writeReleaseScript     = loadScript("write_release")
	fairDrawScript         = loadScript("fair_draw")
	fairAcquireScript      = loadScript("fair_acquire")
	fairRefreshScript      = loadScript("fair_refresh")
	fairLeaveScript        = loadScript("fair_leave")
	fairReleaseScript      = loadScript("fair_release")
	multiAcquireScript     = loadScript("multi_acquire")
	multiExtendScript      = loadScript("multi_extend")
	multiReleaseScript     = loadScript("multi_release")
	resumeFencedScript     = loadScript("resume_fenced")
)

// script is a Lua script with its SHA1 digest, for EVALSHA.
type script struct {
	src, hash string
	hashArg   any // hash as an argument, boxed once
}

func loadScript(name string) script {
	src, err := scriptFiles.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	sum := sha1.Sum(src)
	hash := hex.EncodeToString(sum[:])
	return script{src: string(src), hash: hash, hashArg: hash}
}

// call is one command for a fan-out: a script invocation (its keys and
// arguments, and the EVALSHA argument list built from them once) or, with
// cmd set, a plain command sent with Do; and how its reply reads as a vote.
type call struct {
	s        script
	cmd      string // a plain command (SET NX), sent with Do with args
	keys     []string
	args     []any
	prepared []any
	vote     func(reply any, err error) quorum.Vote
	buf      [8]any // backs prepared, or a plain command's args, when they fit
	// slots complete the call on the first nodes (a Completion each,
	// without an allocation per node).
	slots [8]slot
}

// slot is one node's Completion of a call: it turns the reply into a vote
// for the fan-out.
type slot struct {
	c    *call
	i    int
	done quorum.Done
}

func (s *slot) Complete(reply any, err error) { s.done.Vote(s.i, s.c.vote(reply, err)) }

// with makes a call of s that answers a count (see countVote).
func (s script) with(keys []string, args ...any) *call {
	c := &call{s: s, keys: keys, vote: countVote}
	prepared := c.buf[:0]
	if size := 2 + len(keys) + len(args); size > len(c.buf) {
		prepared = make([]any, 0, size)
	}
	prepared = append(prepared, s.hashArg, len(keys))
	for _, k := range keys {
		prepared = append(prepared, k)
	}
	c.prepared = append(prepared, args...)
	c.args = c.prepared[2+len(keys):] // args itself is not kept
	return c
}

// run sends c to n and waits for its vote.
func (c *call) run(ctx context.Context, n Node) quorum.Vote {
	if c.cmd != "" {
		return c.vote(n.Do(ctx, c.cmd, c.args...))
	}
	if p, ok := n.(PreparedEvaler); ok {
		return c.vote(p.EvalPrepared(ctx, c.s.src, c.prepared))
	}
	return c.vote(n.Eval(ctx, c.s.hash, c.s.src, c.keys, c.args...))
}

// send sends c to node i and reports its vote with done.Vote(i, vote): by
// callback when the node is an AsyncNode, else from a goroutine of its own
// that waits for the call. It never blocks.
func (l *Locker) send(ctx context.Context, c *call, i int, done quorum.Done) {
	n := l.nodes[i]
	a, ok := n.(AsyncNode)
	if !ok {
		go func() { done.Vote(i, c.run(ctx, n)) }()
		return
	}
	f := c.slot(i, done)
	if c.cmd != "" {
		a.DoAsync(ctx, c.cmd, c.args, f)
	} else {
		a.EvalPreparedAsync(ctx, c.s.src, c.prepared, f)
	}
}

// slot returns node i's Completion of c, reporting to done. A call goes to
// each node once at most, so each node's slot serves once, and sends to
// different nodes (which may run on different goroutines) share nothing.
func (c *call) slot(i int, done quorum.Done) *slot {
	if i < len(c.slots) {
		c.slots[i] = slot{c: c, i: i, done: done}
		return &c.slots[i]
	}
	return &slot{c: c, i: i, done: done}
}

// voteFunc is a quorum.Done made of a function.
type voteFunc func(i int, v quorum.Vote)

func (f voteFunc) Vote(i int, v quorum.Vote) { f(i, v) }

// countVote reads a script's count: > 0 is a yes carrying the count, 0 a
// no.
func countVote(reply any, err error) quorum.Vote {
	if err != nil {
		return quorum.Vote{Err: err}
	}
	c, ok := reply.(int64)
	if !ok || c < 0 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected script reply %v", reply)}
	}
	return quorum.Vote{Yes: c > 0, Value: c}
}
