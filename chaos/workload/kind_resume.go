package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// The Resume kind: a client takes a plain lock and hands its token to
// another client, which takes the lock over with Locker.Resume, works and
// unlocks it. The giver's hold ends (is recorded as released) at the
// hand-over, before the Resume is sent; the taker's hold begins when Resume
// returns. Now and then the giver unlocks first and hands over a stale
// token: once its Unlock left fewer than a quorum holding the token, that
// Resume must fail, since Resume never creates a lock; one that succeeds is
// recorded as a call that left a quorum holding a key it must not have
// (checker.NoKeyLeft). And the giver still runs after the hand-over: once
// the taker released the lock, the giver comes back late and unlocks or
// extends its own, stale, Lock (the same token). That must change nothing:
// the token's key must not come back on any master (checker.NothingLeft),
// and a later holder's lock must stay (sampled, and an overlap if another
// client gets it).

// pStale is the probability that the giver unlocks before it hands over.
const pStale = 0.3

// resume does one cycle of the Resume kind.
func (s *step) resume(ctx context.Context) error {
	opts := s.metadata() // the giver's lock keeps a holder record, which Resume moves
	h, err := s.plainLock(ctx, s.c.plain, s.key(Resume), s.cfg.TTL, opts...)
	if err != nil {
		return harness(err)
	}
	h.withRecord(recordOf(h.target.key, holderKey(h.target.key), h.Lock.Token(), false), len(opts) > 0)
	s.c.env.sample(s.bg, h)
	time.Sleep(s.between(0, s.cfg.Hold))
	to := s.c // another client when there is one
	if n := len(s.c.env.clients); n > 1 {
		to = s.c.env.clients[(s.c.ID+1+s.rng.IntN(n-1))%n]
	}
	if s.chance(pStale) {
		s.release(h) // unlock, and wait until fewer than a quorum hold the token
		// Only a release known to have landed makes the token stale: a
		// master that does not answer may still hold it, its release
		// queued behind a pause, and a Resume that reaches it first (on
		// another connection) may rightly succeed.
		stale := s.c.surelyFewer(s.bg, h.target)
		got, err := s.resumeBy(ctx, to, h)
		if err != nil {
			return harness(err)
		}
		if stale {
			s.c.env.History.Left(to.ID, h.name, time.Now(), fmt.Sprintf(
				"Resume of lock %d's token succeeded after its Unlock left fewer than a quorum holding it", h.ID))
		}
		s.release(got)
		return nil
	}
	handover := time.Now()
	s.c.env.History.Release(h.ID, handover) // the hand-over: the giver stops here
	got, err := s.resumeBy(ctx, to, h)
	if err != nil {
		// The token's keys expire with their TTL: Resume deletes nothing.
		return harness(err)
	}
	s.hold(got)
	s.lateGiver(h, handover, to)
	return nil
}

// lateGiver has the giver of h, which handed h's token to client to at
// handover, come back after the taker released the lock and Unlock or
// Extend its stale Lock; nothing of the token may come back.
func (s *step) lateGiver(h *Held, handover time.Time, to *Client) {
	ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
	what := "late Unlock"
	if s.chance(0.5) {
		what = "late Extend"
		h.Lock.Extend(ctx, s.ttl(s.cfg.TTL, 3*s.cfg.TTL))
	} else {
		h.Lock.Unlock(ctx)
	}
	cancel()
	what = fmt.Sprintf("the %s of lock %d by its giver, after the taker released it", what, h.ID)
	s.c.cleared(s.bg, h.name, h.target, what, handover, to)
	if h.record != nil {
		s.c.recordGone(s.bg, h.name, *h.record, what, handover, SettleWithin, to)
	}
}

// resumeBy makes client to resume h's lock with its token, for the run's
// TTL, and records the call as an acquire by to: half of the time
// WithMetadata, whose fields replace the record's. The resumed lock keeps
// a holder record when the giver's did, or the Resume wrote one.
func (s *step) resumeBy(ctx context.Context, to *Client, h *Held) (*Held, error) {
	key, token := h.target.key, h.Lock.Token()
	opts := s.metadata()
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	got, err := to.record(checker.Event{Key: h.name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return to.plain.Resume(actx, key, token, s.cfg.TTL, opts...) })
	rt := recordOf(key, holderKey(key), token, false)
	// A Resume WithMetadata of a lock taken without writes the record
	// only where it ran: a master it did not reach holds the key without.
	rt.mayLack = h.record == nil
	return got.withRecord(rt, len(opts) > 0 || h.record != nil), err
}
