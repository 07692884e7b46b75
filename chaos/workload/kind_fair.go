package workload

import (
	"context"
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

// IsFair reports whether the lock named name (a checker key) is a fair
// lock of the workload or of its probe.
func IsFair(name string) bool {
	return strings.HasPrefix(name, string(Fair)+"-") || strings.HasPrefix(name, "probe-"+string(FairHeld)+"-")
}

// fairHold acquires the fair lock named name by Lock, or TryLock when try
// is set, and records the call.
func (c *Client) fairHold(ctx context.Context, name string, try bool, ttl time.Duration) (*Held, error) {
	key := c.env.Key(name)
	f := c.Locker.Fair(key)
	lock := f.Lock
	if try {
		lock = f.TryLock
	}
	return c.record(checker.Event{Key: name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return lock(ctx, ttl) })
}

// fair takes a fair lock, holds it briefly or now and then past every
// registration, writes, and releases it.
func (s *step) fair(ctx context.Context) error {
	ttl, long := s.cfg.TTL, s.chance(pFairLong)
	if long {
		ttl = 2 * s.cfg.TTL
	}
	actx, cancel := s.acquireCtx(ctx)
	h, err := s.c.fairHold(actx, s.key(Fair), s.chance(pTry), ttl)
	cancel()
	if err != nil {
		return harness(err)
	}
	s.c.env.sample(s.bg, h)
	if long {
		lo := FairRegistration + NodeTimeout
		s.work(h, s.between(lo, max(lo, ttl-3*NodeTimeout)))
	} else {
		time.Sleep(s.between(0, s.cfg.Hold))
	}
	h.Write()
	s.release(h)
	return nil
}

// fairHeld has client A take a fair lock with a long TTL and hold it until
// no registration lives on any master (A's own expired), then client B
// tries it: B is the first in line everywhere, and only the lock key may
// refuse it.
func (p *prober) fairHeld(ctx context.Context) error {
	first, err := p.a.fairHold(ctx, p.name, true, probeTTL)
	if err != nil {
		return harness(err)
	}
	p.e.direct.awaitNoRegistration(ctx, p.e.Key(p.name), probeTTL/2)
	if h, err := p.b.fairHold(ctx, p.name, true, time.Second); err == nil {
		p.unlock(ctx, h, "unlock of a fair hold granted beside another")
	} else if herr := harness(err); herr != nil {
		return herr
	}
	p.unlock(ctx, first, "unlock of the first fair hold")
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
