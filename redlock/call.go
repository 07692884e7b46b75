package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// call is one script call for a fan-out: its EVALSHA argument list (digest,
// number of keys, keys, arguments), built once for every node, how its
// reply reads as a vote, and what runs with each node's vote.
type call struct {
	l        *Locker
	ctx      context.Context // the operation's, for the observers; set when it is sent
	op       string          // as Config.OnNodeError names it
	s        script
	prepared []any
	vote     func(reply any, err error) quorum.Vote
	// acquire: the call grants a lock, and the restart guard judges its
	// yes votes (guard.go).
	acquire bool
	// durable: a yes counts only once the master confirmed it durable
	// (durable.go); and timeout, when not 0, is the fan-out's timeout,
	// longer by that wait.
	durable bool
	timeout time.Duration
	// retryUntil, when set, makes the call a release that is sent again
	// while it fails, until then (retry.go).
	retryUntil time.Time
	// then, if set, runs with each node's vote as it arrives, before the
	// fan-out counts it: on the goroutine that completed the call (a
	// connection's reader), so it must not block.
	then func(i int, v quorum.Vote)
	buf  [10]any // backs prepared when it fits
	// slots complete the call on the first nodes (a Completion each,
	// without an allocation per node).
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
// for a Node that is no PreparedEvaler.
func (c *call) evalArgs() ([]string, []any) {
	nk := c.prepared[1].(int)
	keys := make([]string, nk)
	for j := range keys {
		keys[j] = c.prepared[2+j].(string)
	}
	return keys, c.prepared[2+nk:]
}

// slot is one node's Completion of a call: it turns the reply into a vote
// for the fan-out. i is the node; j the call's index in its fan-out (the
// same, but for a fan-out to some of the nodes).
type slot struct {
	c    *call
	i, j int
	done quorum.Tally
}

// slot returns node i's Completion of c, reporting to done as call j. A
// call goes to each node once at most, so each node's slot serves once, and
// sends to different nodes (which may complete on different goroutines)
// share nothing.
func (c *call) slot(i, j int, done quorum.Tally) *slot {
	if i < len(c.slots) {
		c.slots[i] = slot{c: c, i: i, j: j, done: done}
		return &c.slots[i]
	}
	return &slot{c: c, i: i, j: j, done: done}
}

// Complete turns the reply into node i's vote, runs the call's then, and
// hands the vote to the fan-out; a failed vote that the fan-out did not
// count (it came after the outcome was decided) is reported here.
func (s *slot) Complete(reply any, err error) {
	s.c.l.confirm(s.c, s.i, s.c.voteOf(s.i, reply, err), s.deliver)
}

// deliver hands node i's final vote on to the call's then and the fan-out.
func (s *slot) deliver(v quorum.Vote) {
	c := s.c
	if c.then != nil {
		c.then(s.i, v)
	}
	c.l.heard(c, s.i, v, !s.done.Vote(s.j, v))
	if _, retried := s.done.(retryTally); !retried {
		c.l.retryRelease(c, s.i, v, 1)
	}
}

// voteOf is master i's vote on c: the reply read as c's vote says, and, for
// an acquire, judged by the restart guard.
func (c *call) voteOf(i int, reply any, err error) quorum.Vote {
	v := c.vote(reply, err)
	if c.acquire {
		v = c.l.guard.judge(&c.l.senders[i], v)
	}
	return v
}

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
