package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// Kind is a kind of lock the generative workload exercises.
type Kind string

// The kinds of lock. Each has its own keys ("<kind>-k0", ...; Fenced uses
// "k0", ...), since one key must not be locked as two kinds.
const (
	// Fenced: Lock or TryLock with fencing tokens, write, Unlock.
	Fenced Kind = "fenced"
	// Plain: the same without fencing; Unlock now and then with a context
	// that has already ended; a private key now and then, whose failed
	// attempts must leave no key behind.
	Plain Kind = "plain"
	// Reentrant: one owner nests holds at random depth, inner holds with
	// shorter TTLs than the outer and extended now and then, released in
	// reverse order, the outer one working on after the inner ones ended.
	Reentrant Kind = "reentrant"
	// RW: readers and writers of one RWMutex, mixed.
	RW Kind = "rw"
	// Renew: AutoRenew locks and Locker.Do, holding past the TTL.
	Renew Kind = "renew"
	// Extend: Extend with random TTLs, shorter and longer, two at a time
	// and beside the renewal, some with a context that has already ended.
	Extend Kind = "extend"
	// Semaphore: Acquire or TryAcquire a permit of a semaphore (K = 2 on
	// key 0, K = 3 on key 1), hold it, extend it now and then, release.
	Semaphore Kind = "semaphore"
	// Multi: LockMulti or TryLockMulti of random overlapping sets of 1 to
	// 3 keys, now and then a plain lock of one of them (kind_multi.go).
	Multi Kind = "multi"
	// Resume: a lock handed to another client by its token and resumed,
	// now and then a stale token after Unlock (kind_resume.go).
	Resume Kind = "resume"
	// Fair: Lock or TryLock of a fair lock, now and then a hold that
	// outlives the waiters' registrations (kind_fair.go).
	Fair Kind = "fair"
)

// Kinds lists every kind.
var Kinds = []Kind{Fenced, Plain, Reentrant, RW, Renew, Extend, Semaphore, Multi, Resume, Fair}

// name returns the name of key n of kind k.
func (k Kind) name(n int) string {
	if k == Fenced {
		return fmt.Sprintf("k%d", n)
	}
	return fmt.Sprintf("%s-k%d", k, n)
}

// step is one cycle of a client's generative workload.
type step struct {
	c   *Client
	rng *rand.Rand
	cfg Config
	// bg outlives the run's context: samples, settles and releases of a
	// cycle in progress finish after the run ends.
	bg context.Context
}

// Probabilities of the generative workload's choices.
const (
	pTry         = 0.3  // TryLock rather than Lock
	pEnded       = 0.2  // Unlock or Extend with a context that has already ended
	pPrivate     = 0.15 // Plain: a TryLock of the client's private key
	pReader      = 0.6  // RW: a reader rather than a writer
	pDo          = 0.4  // Renew: Locker.Do rather than an AutoRenew Lock
	pInnerExtend = 0.5  // Reentrant: extend an inner hold
)

// ended is a context that has already ended.
var ended = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

func (s *step) chance(p float64) bool { return s.rng.Float64() < p }

// between draws a duration uniformly in [lo, hi].
func (s *step) between(lo, hi time.Duration) time.Duration {
	return lo + time.Duration(s.rng.Int64N(int64(hi-lo)+1))
}

// minTTL is the shortest TTL the workload draws: the library refuses one
// that does not exceed the node timeout.
const minTTL = NodeTimeout + 20*time.Millisecond

// ttl draws a TTL uniformly in [lo, hi], at least minTTL.
func (s *step) ttl(lo, hi time.Duration) time.Duration {
	return s.between(max(lo, minTTL), max(hi, minTTL))
}

func (s *step) key(k Kind) string { return k.name(s.rng.IntN(s.cfg.Keys)) }

// acquireCtx bounds one acquire.
func (s *step) acquireCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Wait)
}

// run does one cycle of kind k: now and then a blocked cycle
// (kind_blocked.go), else one of the kind's own.
func (s *step) run(ctx context.Context, k Kind) error {
	if bs := blockedOf(k); len(bs) > 0 && s.chance(pBlocked) {
		b := bs[s.rng.IntN(len(bs))]
		try := s.chance(pTry)
		return s.c.blockedCycle(ctx, s.bg, b, s.c.ownName(b), try, s.blockedWait())
	}
	switch k {
	case Plain:
		return s.plain(ctx)
	case Reentrant:
		return s.reentrant(ctx)
	case RW:
		return s.rw(ctx)
	case Renew:
		return s.renew(ctx)
	case Extend:
		return s.extend(ctx)
	case Semaphore:
		return s.semaphore(ctx)
	case Fair:
		return s.fair(ctx)
	case Multi:
		return s.multi(ctx)
	case Resume:
		return s.resume(ctx)
	}
	return s.fenced(ctx)
}

// harness returns err when it says the workload itself is wrong (bad
// input), which ends the run; lock failures are the faults' doing.
func harness(err error) error {
	if err != nil && errorsIsInvalid(err) {
		return fmt.Errorf("workload: %w", err)
	}
	return nil
}

// plainLock acquires name with l, by Lock or TryLock at random, with
// opts.
func (s *step) plainLock(ctx context.Context, l *redlock.Locker, name string, ttl time.Duration, opts ...redlock.Option) (*Held, error) {
	key := s.c.env.Key(name)
	lock := l.Lock
	if s.chance(pTry) {
		lock = l.TryLock
	}
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	return s.c.record(checker.Event{Key: name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return lock(actx, key, ttl, opts...) })
}

// release unlocks h, with an ended context now and then, and checks that
// the release leaves no quorum holding the lock.
func (s *step) release(h *Held) { s.releaseWithin(h, SettleWithin) }

// releaseWithin is release, giving the masters up to within to let go.
func (s *step) releaseWithin(h *Held, within time.Duration) {
	ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
	defer cancel()
	if s.chance(pEnded) {
		ctx = ended
	}
	h.releaseWith(ctx)
	// The holder's failures excuse a master: a resumed lock's holder is
	// another client than the step's.
	what := fmt.Sprintf("unlock of lock %d", h.ID)
	h.client.clearedWithin(s.bg, h.name, h.target, what, h.since, within)
	h.client.clearedRecord(s.bg, h, what, within)
}

// work holds the lock for d, noting its Until and sampling the masters
// every TTL/4; it stops early when the lock is lost.
func (s *step) work(h *Held, d time.Duration) {
	every := max(s.cfg.TTL/4, time.Millisecond)
	for end := time.Now().Add(d); time.Now().Before(end); {
		time.Sleep(min(every, time.Until(end)))
		if h.Lock.Err() != nil {
			h.noteUntil()
			return
		}
		h.noteUntil()
		s.c.env.sample(s.bg, h)
	}
}

func (s *step) fenced(ctx context.Context) error {
	h, err := s.plainLock(ctx, s.c.Locker, s.key(Fenced), s.cfg.TTL)
	if err != nil {
		return harness(err)
	}
	s.c.env.sample(s.bg, h)
	time.Sleep(s.between(0, s.cfg.Hold))
	h.Write()
	s.release(h)
	return nil
}

func (s *step) plain(ctx context.Context) error {
	if s.chance(pPrivate) {
		return s.private(ctx)
	}
	return s.holdPlain(ctx, s.key(Plain))
}

// holdPlain takes the plain lock of name, holds it and releases it.
func (s *step) holdPlain(ctx context.Context, name string) error {
	h, err := s.plainLock(ctx, s.c.plain, name, s.cfg.TTL)
	if err != nil {
		return harness(err)
	}
	s.hold(h)
	return nil
}

// hold samples h, holds it for up to Hold, and releases it.
func (s *step) hold(h *Held) {
	s.c.env.sample(s.bg, h)
	time.Sleep(s.between(0, s.cfg.Hold))
	s.release(h)
}

// privateTTLs is the TTL of a private key, in TTLs of the workload.
const privateTTLs = 10

// LongestTTL is the longest TTL a Locker of the random workload with the
// restart guard on acquires or extends a lock with, for Config.TTL ttl:
// an Extend's (3 TTLs), a private key's (privateTTLs) and a blocked call's
// (blockedTTL). The masters' records keep the longest TTL any client used,
// and every client's guard holds a restarted master back that long
// (redlock/guard.go); the probes' Lockers have the guard off.
func LongestTTL(ttl time.Duration) time.Duration {
	return max(3*ttl, privateTTLs*ttl, blockedTTL)
}

// private tries the client's own key, which no other client locks, with a
// long TTL: an attempt can only fail by a fault, and whatever it wrote must
// leave a quorum of the masters once it returned.
func (s *step) private(ctx context.Context) error {
	name := fmt.Sprintf("own-%d", s.c.ID)
	key := s.c.env.Key(name)
	ttl := privateTTLs * s.cfg.TTL
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	start := time.Now()
	h, err := s.c.recordFrom(start, checker.Event{Key: name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return s.c.long.plain.TryLock(actx, key, ttl) })
	if err != nil {
		s.c.cleared(s.bg, name, target{mode: modeAny, key: key}, "failed TryLock", start)
		return harness(err)
	}
	s.c.env.sample(s.bg, h)
	s.release(h)
	return nil
}

// reentrant takes an outer hold as a fresh owner, nests inner holds with
// shorter TTLs (extending some), releases them innermost first, then works
// on under the outer hold and samples it: an inner hold that shortened or
// ended the outer one shows.
func (s *step) reentrant(ctx context.Context) error {
	if s.chance(pRetried) {
		return s.retried(ctx)
	}
	name := s.key(Reentrant)
	key := s.c.env.Key(name)
	s.c.owners++
	owner := fmt.Sprintf("c%d.%d", s.c.ID, s.c.owners)
	r := s.c.Locker.Reentrant(key, owner)
	t := target{mode: modeHash, key: key, member: owner}
	// The owner's holder record: every hold keeps it in step with the
	// hash, once a hold WithMetadata wrote it.
	rt := recordOf(key, holderKey(key), owner, true)
	ev := checker.Event{Key: name, Owner: owner}
	outerTTL := 2 * s.cfg.TTL
	uncertain := s.c.obs.mark()
	lock := func(ttl time.Duration) (*Held, error) {
		opts := s.metadata()
		actx, cancel := s.acquireCtx(ctx)
		defer cancel()
		l := r.Lock
		if s.chance(pTry) {
			l = r.TryLock
		}
		h, err := s.c.record(ev, t, func() (*redlock.Lock, error) { return l(actx, ttl, opts...) })
		return h.withRecord(rt, len(opts) > 0), err
	}
	start := time.Now()
	outer, err := lock(outerTTL)
	if err != nil {
		// A fresh owner's failed first hold: nothing of the owner may
		// remain once its releases returned, its record included.
		s.c.cleared(s.bg, name, t, "failed first hold of a reentrant owner", start)
		s.c.recordGone(s.bg, name, *rt, "failed first hold of a reentrant owner", start, SettleWithin)
		return harness(err)
	}
	holds := []*Held{outer}
	s.c.env.sample(s.bg, holds...)
	for depth := 1 + s.rng.IntN(3); len(holds) <= depth; {
		h, err := lock(s.ttl(s.cfg.TTL/4, s.cfg.TTL/2))
		if err != nil {
			if herr := harness(err); herr != nil {
				return herr
			}
			break
		}
		holds = append(holds, h)
		s.c.env.sample(s.bg, holds...)
		if s.chance(pInnerExtend) {
			s.extendOnce(h, s.ttl(s.cfg.TTL/8, s.cfg.TTL/2))
			s.c.env.sample(s.bg, holds...)
		}
	}
	for len(holds) > 1 {
		h := holds[len(holds)-1]
		holds = holds[:len(holds)-1]
		ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
		if s.chance(pEnded) {
			ctx = ended
		}
		h.releaseWith(ctx)
		cancel()
		s.c.env.sample(s.bg, holds...)
	}
	s.work(outer, s.between(0, s.cfg.TTL/2))
	outer.Write()
	within := SettleWithin
	if s.c.obs.uncertainSince(uncertain) {
		// An acquire of this owner may have landed where its answer was
		// lost: that count outlives the Unlocks, not the hash's TTL,
		// which no hold set beyond outerTTL from now.
		within += outerTTL
	}
	s.releaseWithin(outer, within)
	return nil
}

// extendOnce extends h by ttl, with an ended context now and then, and
// notes its Until after.
func (s *step) extendOnce(h *Held, ttl time.Duration) {
	ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
	defer cancel()
	if s.chance(pEnded) {
		ctx = ended
	}
	h.Lock.Extend(ctx, ttl)
	h.noteUntil()
}
