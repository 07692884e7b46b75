package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// The Multi kind: clients lock random sets of 1 to 3 of multiKeys keys at
// once with LockMulti or TryLockMulti, overlapping each other's sets, and
// now and then one key alone with a plain lock (the same string key, so the
// two kinds exclude each other). A multi-key hold is recorded as one hold
// per key, all granted, extended and released at the same instants, so the
// checkers see a key held by two at once however the sets overlap.

// multiKeys is the number of keys the multi-key sets are drawn from.
const multiKeys = 4

// pMultiPlain is the probability of a plain lock of one key instead of a
// multi-key lock.
const pMultiPlain = 0.2

// multi does one cycle of the Multi kind.
func (s *step) multi(ctx context.Context) error {
	if s.chance(pMultiPlain) {
		return s.holdPlain(ctx, Multi.name(s.rng.IntN(multiKeys)))
	}
	hs, err := s.lockMulti(ctx, s.multiNames())
	if err != nil {
		return harness(err)
	}
	s.sampleAll(hs)
	time.Sleep(s.between(0, s.cfg.Hold))
	if s.chance(pInnerExtend) {
		xctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
		if s.chance(pEnded) {
			xctx = ended
		}
		hs[0].Lock.Extend(xctx, s.ttl(s.cfg.TTL/2, 2*s.cfg.TTL))
		cancel()
		for _, h := range hs {
			h.noteUntil()
		}
		s.sampleAll(hs)
	}
	s.releaseMulti(hs)
	return nil
}

// multiNames draws 1 to 3 distinct key names of the Multi kind, in random
// order.
func (s *step) multiNames() []string {
	perm := s.rng.Perm(multiKeys)
	names := make([]string, 1+s.rng.IntN(3))
	for i := range names {
		names[i] = Multi.name(perm[i])
	}
	return names
}

// lockMulti locks the keys of names at once, by LockMulti or TryLockMulti
// at random, and records the call as one acquire per key: all granted at
// the moment the call returned, or all not.
func (s *step) lockMulti(ctx context.Context, names []string) ([]*Held, error) {
	opts := s.metadata()
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	return s.c.lockMulti(actx, names, s.chance(pTry), s.cfg.TTL, opts...)
}

// lockMulti locks the keys of names at once for ttl, by LockMulti (or
// TryLockMulti when try is set), and records the call as one acquire per
// key: all granted at the moment the call returned, or all not. opts are
// the call's (WithMetadata: the first key's hold keeps the lock's holder
// record, which lies beside the first key).
func (c *Client) lockMulti(ctx context.Context, names []string, try bool, ttl time.Duration, opts ...redlock.Option) ([]*Held, error) {
	e := c.env
	keys := make([]string, len(names))
	for i, n := range names {
		keys[i] = e.Key(n)
	}
	lock := c.plain.LockMulti
	if try {
		lock = c.plain.TryLockMulti
	}
	e.attempts.Add(1)
	start := time.Now()
	lk, err := lock(ctx, keys, ttl, opts...)
	now := time.Now()
	if err != nil {
		for _, n := range names {
			e.History.Attempt(checker.Event{Key: n, Client: c.ID}, start, now, Outcome(err))
		}
		return nil, err
	}
	until := lk.Until()
	hs := make([]*Held, len(names))
	for i, n := range names {
		id := e.History.GrantCall(checker.Event{Key: n, Client: c.ID}, start, now, until)
		hs[i] = &Held{Lock: lk, ID: id, name: n, target: target{mode: modeString, key: keys[i], member: lk.Token()}, client: c, since: start}
	}
	hs[0].withRecord(recordOf(keys[0], holderKey(keys[0]), lk.Token(), false), len(opts) > 0)
	return hs, nil
}

// sampleAll samples the masters for every key of a multi-key hold.
func (s *step) sampleAll(hs []*Held) {
	for _, h := range hs {
		s.c.env.sample(s.bg, h)
	}
}

// releaseMulti records that the holder stops using every key now, unlocks
// the multi-key lock (with an ended context now and then), and checks that
// the release leaves no quorum holding any of its keys.
func (s *step) releaseMulti(hs []*Held) {
	ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
	defer cancel()
	if s.chance(pEnded) {
		ctx = ended
	}
	now := time.Now()
	for _, h := range hs {
		s.c.env.History.Release(h.ID, now)
	}
	hs[0].Lock.Unlock(ctx)
	for _, h := range hs {
		what := fmt.Sprintf("unlock of multi-key lock %d", h.ID)
		s.c.cleared(s.bg, h.name, h.target, what, h.since)
		s.c.clearedRecord(s.bg, h, what, SettleWithin)
	}
}
