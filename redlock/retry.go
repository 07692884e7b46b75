package redlock

// Releases are retried. A release whose call to a master failed (a broken
// connection, no answer, a client that gave the command up before it
// wrote it) may not have run, and the lock then stays on that master until
// its TTL: a delay for every other client. Unlike an acquire or an Extend,
// a release may safely go again: it is idempotent (it removes its own hold
// id or token only, and otherwise leaves a tombstone for it, which a second
// time changes nothing), so a release that ran twice does no harm. So a
// failed release is sent again, with a backoff, until one gets an answer
// or the lock's TTL has passed since the first (by then the key has
// expired on its own). The transport rule that a command which may have
// reached a master is never sent again is the Node's, and holds: each
// retry is a new call, made by the Locker, for a command it knows to be
// idempotent.

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// maxReleaseRetries bounds the retries of one release on one master.
const maxReleaseRetries = 8

// retriable marks c as a release: sent again while it fails, for as long
// as ttl from now, and waited for by Locker.Close.
func (c *call) retriable(ttl time.Duration) {
	c.release, c.retryUntil = true, time.Now().Add(ttl)
}

// retryRelease sends c, a release whose call to master i failed with v,
// again after a backoff, unless it was not a failure, it is no release, or
// its time is up.
func (l *Locker) retryRelease(c *call, i int, v quorum.Vote, attempt int) {
	if v.Err == nil || c.retryUntil.IsZero() || attempt > maxReleaseRetries {
		return
	}
	wait := min(l.nodeTimeout<<(attempt-1), time.Second)
	if time.Now().Add(wait).After(c.retryUntil) {
		return
	}
	l.inflight.add() // until the retry is sent: Close waits for it
	time.AfterFunc(wait, func() {
		defer l.inflight.done()
		rc := &call{l: c.l, ctx: c.ctx, op: c.op, s: c.s, prepared: c.prepared, vote: c.vote, release: true, retryUntil: c.retryUntil}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), l.nodeTimeout)
		l.masters[i].start(ctx, rc, i, retryTally{l: l, c: rc, attempt: attempt, cancel: cancel})
	})
}

// retryTally takes the vote of a retried release.
type retryTally struct {
	l       *Locker
	c       *call
	attempt int
	cancel  context.CancelFunc
}

// Vote implements quorum.Tally: a failure is retried again; the vote is no
// part of any Result, so its failure is reported as a late one.
func (t retryTally) Vote(i int, v quorum.Vote) bool {
	t.cancel()
	t.l.retryRelease(t.c, i, v, t.attempt+1)
	return false
}
