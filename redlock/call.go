package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// call is one script call for a fan-out: its EVALSHA argument list (digest,
// number of keys, keys, arguments), built once for every master, how its
// reply reads as a vote, and what that vote must pass before it counts.
type call struct {
	l        *Locker
	ctx      context.Context // the operation's, for the observers; set when it is sent
	op       string          // as Config.OnNodeError names it
	s        script
	prepared []any
	vote     func(reply any, err error) quorum.Vote
	// grant, when not 0, is the TTL in ms that a yes vote grants the lock
	// on the master for (an acquire, an Extend, a renewal, a Resume): the
	// restart guard judges the yes (guard.go), which needs the master's
	// record to cover this TTL. acquire marks an acquire among them: a
	// master the guard holds back after a restart grants it nothing.
	grant   int64
	acquire bool
	// confirms: a yes counts only once the master confirmed it durable
	// (Config.Durability, durable.go); and timeout, when not 0, is the
	// fan-out's timeout, longer by that wait.
	confirms bool
	timeout  time.Duration
	// release marks a release (retry.go): sent again while it fails, until
	// retryUntil, and waited for by Locker.Close.
	release    bool
	retryUntil time.Time
	// then, if set, runs with each master's vote as it arrives, before the
	// fan-out counts it: on the goroutine that completed the call (a
	// connection's reader), so it must not block.
	then func(i int, v quorum.Vote)
	buf  [10]any // backs prepared when it fits
	// slots complete the call on the first masters (a Completion each,
	// without an allocation per master).
	slots [8]slot
}

// newCall makes a call of s, with KEYS tomb then keys, and ARGV args, whose
// reply is a count (see countVote).
func (l *Locker) newCall(op string, s script, tomb string, keys []string, args ...any) *call {
	c := &call{l: l, op: op, s: s, vote: countVote}
	prepared := c.buf[:0]
	if size := 3 + len(keys) + len(args); size > len(c.buf) {
		prepared = make([]any, 0, size)
	}
	prepared = append(prepared, s.hashArg, 1+len(keys), tomb)
	for _, k := range keys {
		prepared = append(prepared, k)
	}
	c.prepared = append(prepared, args...)
	return c
}

// evalArgs splits the prepared list into Node.Eval's keys and arguments,
// for a Node without EvalPrepared.
func (c *call) evalArgs() ([]string, []any) {
	nk := c.prepared[1].(int)
	keys := make([]string, nk)
	for j := range keys {
		keys[j] = c.prepared[2+j].(string)
	}
	return keys, c.prepared[2+nk:]
}

// slot is one master's Completion of a call: it runs the reply through the
// master's pipeline (master.complete) and hands the vote to the fan-out as
// call j (the master's index, but for a fan-out to some of the masters).
type slot struct {
	c    *call
	m    *master
	j    int
	done quorum.Tally
}

// slot returns master m's Completion of c, reporting to done as call j. A
// call goes to each master once at most, so each master's slot serves
// once, and sends to different masters (which may complete on different
// goroutines) share nothing. A release counts as in flight (Locker.Close)
// from here until its vote is delivered.
func (c *call) slot(m *master, j int, done quorum.Tally) *slot {
	if c.release {
		c.l.inflight.add()
	}
	if m.i < len(c.slots) {
		c.slots[m.i] = slot{c: c, m: m, j: j, done: done}
		return &c.slots[m.i]
	}
	return &slot{c: c, m: m, j: j, done: done}
}

// Complete implements Completion.
func (s *slot) Complete(reply any, err error) { s.m.complete(s, reply, err) }

// countVote reads a script's count: > 0 is a yes carrying the count, 0 a
// no. Anything else, such as the "QUEUED" of a connection left in MULTI,
// is a failed vote: the script did not run as sent.
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
