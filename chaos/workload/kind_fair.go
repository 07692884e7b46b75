package workload

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// A fair lock's hold is recorded as a plain lock's: its state on the
// masters is the key itself, holding the token. Its waiters' queue lies
// beside it ("{key}:fair:..."), expires on its own, and is not sampled: the
// queue only orders the waiters, and mutual exclusion must hold from the
// lock key alone. Two things test that: the holds of the random workload
// that outlive every registration (pFairLong), and the FairHeld probe.

// FairRegistration is how long a fair waiter's registration lives on a
// master after its last refresh, for the harness's clients (6 node
// timeouts, see redlock.Fair).
const FairRegistration = 6 * NodeTimeout

// pFairLong is the probability that a fair holder holds past every
// registration (with a TTL of two TTLs), so that the other clients'
// attempts find no earlier waiter and only the lock key keeps them out.
const pFairLong = 0.15

// maxRetryCeiling is the longest wait between two attempts of a Lock that
// no release announcement wakes: the default retry's ceiling.
const maxRetryCeiling = 256 * time.Millisecond

// FairStarvationBound is the longest a fair lock of TTL ttl may lie free
// (no hold recorded) while a client waits for it, under the faults of a
// safe scenario (a minority of the masters, and lost replies or reset
// connections of one client at a time). A free lock is taken by the first
// waiter in line as soon as it tries; what may delay that is, one after
// the other:
//   - a key whose Unlock was lost (a client's links reset) stays held on
//     the masters up to its TTL after the holder let go (a long hold's TTL
//     is twice as long, but it has held past half of it already);
//   - a waiter that gave up while first in line, whose withdrawal was
//     lost, stays first until its registration expires;
//   - no release announcement comes: the waiter tries again after at most
//     the retry ceiling;
//   - its attempt meets a faulty master and waits out the node timeout,
//     and one more attempt, plus a node timeout of margin.
func FairStarvationBound(ttl time.Duration) time.Duration {
	return ttl + FairRegistration + maxRetryCeiling + 3*NodeTimeout
}

// FairSetup is how long from the start of a run a client's first calls
// may also be setting it up (checker.StarvationAfterSetup): connections
// dialled, the restart guard's first read and write of every master's
// record (a node timeout each, under the run's faults from the start),
// the scripts' first load. A fair waiter called at the start under a
// loaded -race run waited up to 330 ms over FairStarvationBound (2 of 8
// runs of safe-fair two at a time), always in its first call.
const FairSetup = 5 * NodeTimeout

// IsFair reports whether the lock named name (a checker key) is a fair
// lock of the workload or of its probes.
func IsFair(name string) bool {
	return strings.HasPrefix(name, string(Fair)+"-") || strings.HasPrefix(name, "probe-"+string(FairHeld)+"-") ||
		strings.HasPrefix(name, "probe-"+string(FairOrder)+"-")
}

// Probabilities of the fair kind's choices.
const (
	pFairCrash  = 0.1 // a waiter crashes (crash.go) while it waits
	pFairGiveUp = 0.2 // a Lock gives up within 4 node timeouts
)

// fairHold acquires the fair lock named name by Lock, or TryLock when try
// is set, through the key's gate (registration.go), and records the call.
// bg bounds the harness's reads.
// opts are the acquire's (WithMetadata: the hold keeps its holder record).
func (c *Client) fairHold(ctx, bg context.Context, name string, try bool, ttl time.Duration, opts ...redlock.Option) fairResult {
	r := c.fairWith(ctx, bg, c.Locker, name, try, ttl, fairHooks{}, opts...)
	if r.h != nil {
		key := c.env.Key(name)
		r.h.withRecord(recordOf(key, holderKey(key), r.h.Lock.Token(), false), len(opts) > 0)
	}
	return r
}

// fairWith is fairHold with the Locker l, telling hooks how it goes.
func (c *Client) fairWith(ctx, bg context.Context, l *redlock.Locker, name string, try bool, ttl time.Duration, hooks fairHooks, opts ...redlock.Option) fairResult {
	f := l.Fair(c.env.Key(name))
	lock := f.Lock
	if try {
		lock = f.TryLock
	}
	ev := checker.Event{Key: name, Waits: !try}
	if d, ok := ctx.Deadline(); ok && !try {
		ev.GiveUp = c.env.History.Offset(d)
	}
	return c.fairCall(bg, name, ev, func() (*redlock.Lock, error) { return lock(ctx, ttl, opts...) }, hooks)
}

// registrationGone checks that the registration of the fair waiter of r
// (if it was seen) is gone from every master once the call gave up, or
// its hold was released.
func (c *Client) registrationGone(bg context.Context, name string, r fairResult, what string) {
	if r.waiter == "" {
		return
	}
	c.cleared(bg, name, target{mode: modeFair, key: c.env.Key(name), member: r.waiter}, what, r.start)
}

// fair takes a fair lock, holds it briefly or now and then past every
// registration, writes, and releases it. Now and then its waiter gives up
// early, or crashes (fairCrash).
func (s *step) fair(ctx context.Context) error {
	name := s.key(Fair)
	ttl, long := s.cfg.TTL, s.chance(pFairLong)
	if long {
		ttl = 2 * s.cfg.TTL
	}
	if s.chance(pFairCrash) && s.c.sh.mayCrash(s.c.env.Key(name), 2*(FairRegistration+2*s.cfg.TTL)) {
		return s.fairCrash(ctx, name, ttl)
	}
	try := s.chance(pTry)
	wait := s.cfg.Wait
	if !try && s.chance(pFairGiveUp) {
		wait = s.between(0, 4*NodeTimeout)
	}
	opts := s.metadata()
	actx, cancel := context.WithTimeout(ctx, wait)
	r := s.c.fairHold(actx, s.bg, name, try, ttl, opts...)
	cancel()
	if r.err != nil {
		s.c.registrationGone(s.bg, name, r, "a fair waiter that gave up")
		return harness(r.err)
	}
	h := r.h
	s.c.env.sample(s.bg, h)
	if long {
		lo := FairRegistration + NodeTimeout
		s.work(h, s.between(lo, max(lo, ttl-3*NodeTimeout)))
	} else {
		time.Sleep(s.between(0, s.cfg.Hold))
	}
	h.Write()
	s.release(h)
	s.c.registrationGone(s.bg, name, r, fmt.Sprintf("the unlock of fair lock %d", h.ID))
	return nil
}

// fairCrash has a waiter of the fair lock name crash while it waits: its
// Locker (crash.go) stops sending anything after a random wait of up to 4
// node timeouts, and its Lock call is cancelled then. Its registration
// stays until it expires, and its lock key, if a grant landed, until its
// TTL: it may delay the others that long, no longer (NoStarvation), and
// the registration must be gone from every master once its lifetime has
// passed (crashedRegistration).
func (s *step) fairCrash(ctx context.Context, name string, ttl time.Duration) error {
	c := s.c
	l, obs, crash, err := c.crashable()
	if err != nil {
		return fmt.Errorf("workload: a crashable Locker: %w", err)
	}
	actx, cancel := context.WithTimeout(ctx, s.cfg.Wait)
	defer cancel()
	after := s.between(NodeTimeout/2, 4*NodeTimeout)
	crashed := make(chan time.Time, 1)
	var timer *time.Timer
	r := c.fairWith(actx, s.bg, l, name, false, ttl, fairHooks{started: func(start time.Time) {
		timer = time.AfterFunc(after, func() {
			crash()
			at := time.Now()
			c.env.History.Crash(c.ID, name, start, at)
			cancel()
			crashed <- at
		})
	}})
	at := time.Now()
	if timer.Stop() {
		crash() // served first: the process crashes holding the lock
	} else {
		at = <-crashed
	}
	if r.waiter != "" {
		c.env.pending.Add(1)
		go func() {
			defer c.env.pending.Done()
			c.crashedRegistration(s.bg, name, r, at, obs)
		}()
	}
	return harness(r.err)
}

// crashedRegistration waits until the registration of the waiter of r,
// which crashed at crashed, has outlived its lifetime, and records each
// master on which it still lives: a crashed waiter may delay the others
// only that long. A master to which one of the waiter's calls failed
// before the crash (obs) may have got it late, and is excused.
func (c *Client) crashedRegistration(ctx context.Context, name string, r fairResult, crashed time.Time, obs *observer) {
	time.Sleep(time.Until(crashed.Add(FairRegistration + 2*NodeTimeout)))
	t := target{mode: modeFair, key: c.env.Key(name), member: r.waiter}
	var live []int
	for j, rd := range c.env.direct.readTarget(ctx, t) {
		if rd.known && rd.held && !obs.failedBetween(j, r.start, crashed.Add(2*NodeTimeout), opLock, opRelease) {
			live = append(live, j)
		}
	}
	if len(live) > 0 {
		c.env.History.Remain(c.ID, name, time.Now(), fmt.Sprintf(
			"the registration of a fair waiter that crashed %v ago still lives on masters %v (its lifetime is %v)",
			time.Since(crashed).Round(time.Millisecond), live, FairRegistration))
	}
}

// fairHeld has client A take a fair lock with a long TTL and hold it until
// no registration lives on any master (A's own expired), then client B
// tries it: B is the first in line everywhere, and only the lock key may
// refuse it.
func (p *prober) fairHeld(ctx context.Context) error {
	first := p.a.fairHold(ctx, ctx, p.name, true, probeTTL)
	if first.err != nil {
		return harness(first.err)
	}
	p.e.direct.awaitNoRegistration(ctx, p.e.Key(p.name), probeTTL/2)
	if r := p.b.fairHold(ctx, ctx, p.name, true, time.Second); r.err == nil {
		p.unlock(ctx, r.h, "unlock of a fair hold granted beside another")
	} else if herr := harness(r.err); herr != nil {
		return herr
	}
	p.unlock(ctx, first.h, "unlock of the first fair hold")
	return nil
}

// liveRegistrations counts the registrations of a fair lock whose expiry
// has not passed on this master.
var liveRegistrations = redis.NewScript(1, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`)

// awaitNoRegistration waits, up to within, until no master holds a live
// registration of the fair lock key: each answers 0, read directly.
func (m *masters) awaitNoRegistration(ctx context.Context, key string, within time.Duration) {
	expiries := "{" + key + "}:fair:expiry"
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		live := 0
		for i := range m.pools {
			err := m.on(ctx, i, func(ctx context.Context, c redis.Conn) error {
				n, err := redis.Int(liveRegistrations.DoContext(ctx, c, expiries))
				live += n
				return err
			})
			if err != nil {
				live++ // unknown: not known to be free
			}
		}
		if live == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}
