package workload

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// What a call wrote must be gone from every master once the call and its
// releases returned, a minority included: the library sends every release,
// and a release that returned has run. The exceptions are the masters to
// which a release failed (a lost reply, a reset, a timeout: it may not have
// run), and, for a reentrant hold, which is released only where it was
// granted, the masters to which its acquire failed: those may keep it
// until its TTL. The observer (observe.go) says which calls failed. And a
// master to which a fault held back the traffic of the clients while it
// kept the key, or when the key expired (Env.heldAt): a release may have
// been on its way.

// Operations of the library's NodeErrorEvent.
const (
	opLock    = "lock"
	opRelease = "release" // a failed attempt's clean-up, a waiter's withdrawal
	opUnlock  = "unlock"
)

// excused reports whether master j may keep what a call of one of the
// clients cs wrote since: one of their releases to it failed since then,
// or one of their acquires when acquires count (a reentrant hold).
func excused(cs []*Client, j int, since time.Time, acquires bool) bool {
	ops := []string{opRelease, opUnlock}
	if acquires {
		ops = append(ops, opLock)
	}
	for _, c := range cs {
		if c.obs.failedSince(j, since, ops...) {
			return true
		}
	}
	return false
}

// cleared checks what a call of c on the lock name left behind: it waits
// up to SettleWithin until fewer than a quorum of the masters hold t
// (recording a Leftover if they still do, see settle), and until no master
// holds it that is not excused (recording a Remained for those that do).
// since is when the call (for a release, the hold's acquire) was invoked;
// the failures of the clients cs and c from then on excuse a master.
func (c *Client) cleared(ctx context.Context, name string, t target, what string, since time.Time, cs ...*Client) {
	c.clearedWithin(ctx, name, t, what, since, SettleWithin, cs...)
}

// clearedWithin is cleared, waiting up to within.
func (c *Client) clearedWithin(ctx context.Context, name string, t target, what string, since time.Time, within time.Duration, cs ...*Client) {
	deadline := time.Now().Add(within)
	if t.mode != modeFair {
		c.settleWithin(ctx, name, t, what, within)
	}
	c.remains(ctx, name, t, what, since, deadline, cs...)
}

// remains is cleared's check of every master: it waits until deadline for
// no master to hold t that is not excused, and records a Remained for
// those that still do, or that held it until it expired rather than lose
// it before (a fair registration left behind expires on its own, and must
// not pass for one that a slow withdrawal removed).
func (c *Client) remains(ctx context.Context, name string, t target, what string, since, deadline time.Time, cs ...*Client) {
	cs = append(cs, c)
	lives := map[int]*lifespan{} // per master holding t
	var expired []int
	for {
		var stuck []int
		onItsWay := false // a master holds t while a release to it may be on its way
		for j, r := range c.env.direct.readTarget(ctx, t) {
			switch {
			case !r.known || excused(cs, j, since, t.acquiresExcuse()):
			case r.held:
				if c.env.heldAt(cs, j, r.at) {
					onItsWay = true
				} else {
					stuck = append(stuck, j)
				}
				if lives[j] == nil {
					lives[j] = &lifespan{seen: r.at}
				}
				lives[j].note(r.at.Add(r.left), false)
			default:
				if l := lives[j]; l != nil && l.expiredBy(r.at) && !c.env.heldAt(cs, j, l.expires.Add(-expirySlack), l.expires) {
					expired = append(expired, j)
				}
				delete(lives, j)
			}
		}
		done := len(stuck) == 0 && !onItsWay || time.Now().After(deadline)
		if done && ctx.Err() == nil && len(expired)+len(stuck) > 0 {
			// A release still on its way may be failing: its report comes
			// when its bytes arrived, or its connection went, and its call
			// ended.
			expired = c.unexcused(ctx, expired, cs, since, t.acquiresExcuse())
			stuck = c.unexcused(ctx, stuck, cs, since, t.acquiresExcuse())
		}
		if done && ctx.Err() == nil {
			if len(expired) > 0 {
				c.env.History.Remain(c.ID, name, time.Now(), fmt.Sprintf("%s: masters %v held %s %s until it expired, and no release to them failed",
					what, expired, t.key, t.member))
			}
			if len(stuck) > 0 {
				c.env.History.Remain(c.ID, name, time.Now(), fmt.Sprintf(
					"%s: masters %v still hold %s %s %v after it returned, and no release to them failed",
					what, stuck, t.key, t.member, time.Since(since).Round(time.Millisecond)))
			}
		}
		if done || ctx.Err() != nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// heldAt reports whether a fault held back, at one of the times ts, the
// traffic between master j and one of the clients cs (netfault.Link.HeldAt):
// a release on its way then may land once what it was to remove expired,
// or not yet, which is the network's doing and not the library's.
func (e *Env) heldAt(cs []*Client, j int, ts ...time.Time) bool {
	for _, c := range cs {
		l := e.Net.Link(c.ID, j)
		if slices.ContainsFunc(ts, l.HeldAt) {
			return true
		}
	}
	return false
}

// unexcused returns the masters of js that stay unexcused (see excused)
// once the bytes client c sent have reached the masters and its calls had
// SettleWithin more to end: a release that a slow link held back fails
// when its call ends, which may come after the check saw its master keep
// what the release was to remove.
func (c *Client) unexcused(ctx context.Context, js []int, cs []*Client, since time.Time, acquires bool) []int {
	c.env.awaitDelivered(ctx, c.ID)
	deadline := time.Now().Add(SettleWithin)
	for {
		left := slices.DeleteFunc(slices.Clone(js), func(j int) bool { return excused(cs, j, since, acquires) })
		if len(left) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return left
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readTarget asks every master how long it still holds t: the modes of
// remainingScript, and a fair waiter's registration.
func (m *masters) readTarget(ctx context.Context, t target) []reading {
	if t.mode == modeFair {
		return m.readWith(ctx, liveRegistration, fairQueue(t.key), fairExpiry(t.key), t.member)
	}
	return m.read(ctx, t)
}

// lifespan is what a check saw of something a master held: when it first
// saw it, and when it would expire (never: it has no TTL).
type lifespan struct {
	seen, expires time.Time
	never         bool
}

// note raises the expiry to exp, or makes it never with never.
func (l *lifespan) note(exp time.Time, never bool) {
	l.never = l.never || never
	if exp.After(l.expires) {
		l.expires = exp
	}
}

// expiredBy reports whether something seen held and gone at gone expired
// rather than was removed: it vanished at its expiry, and it had at least
// expiryMargin to be removed before (a release that lands near the
// expiry anyway cannot be told from the expiry, and is no leftover).
func (l *lifespan) expiredBy(gone time.Time) bool {
	return !l.never && !gone.Before(l.expires.Add(-expirySlack)) && l.expires.Sub(l.seen) >= expiryMargin
}

// expirySlack is how close to its expiry something may vanish and count
// as expired rather than removed: the reads are dated when their answer
// arrived, a little after the master ran them. expiryMargin is how long
// before its expiry it must have been seen for its expiry to show that
// nothing removed it: more than a release takes to land.
const (
	expirySlack  = 20 * time.Millisecond
	expiryMargin = 250 * time.Millisecond
)
