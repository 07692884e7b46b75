package workload

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
	"github.com/quorumlock/quorumlock/sim/master"
)

// What a hold is on the masters, and the records of its life.

// target is what a master holds for one hold.
type target struct {
	strings      []string // string keys that hold token (all of them)
	token        string
	hash, owner  string // reentrant: the hash holding the owner
	zset, member string // read: the readers' sorted set, the reader
}

// end returns until when master m (read at now, under the World's lock)
// keeps t, on the simulation's clock: now when it does not hold it.
func (t target) end(m *master.Master, now time.Time) time.Time {
	latest := time.Time{}
	first := true
	keep := func(expireAt int64) {
		var e time.Time
		if expireAt == 0 {
			e = forever(now)
		} else {
			e = m.Clock.SimAt((expireAt + 1) * int64(time.Millisecond))
		}
		if first || e.Before(latest) {
			latest = e
		}
		first = false
	}
	for _, k := range t.strings {
		held, exp := m.Holds(now, k, t.token)
		if !held {
			return now
		}
		keep(exp)
	}
	if t.hash != "" {
		owner, held := m.HashGet(now, t.hash, layout.OwnerField)
		if !held || owner != t.owner {
			return now
		}
		exp, _ := m.ExpireAt(now, t.hash)
		keep(exp)
	}
	if t.zset != "" {
		score, ok := m.ZScore(now, t.zset, t.member)
		if !ok || int64(score) <= m.Clock.Ms(now) {
			return now
		}
		keep(int64(score) - 1) // a reader is gone once the clock reaches its score
		if exp, _ := m.ExpireAt(now, t.zset); exp != 0 {
			keep(exp)
		}
	}
	if first {
		return now
	}
	if latest.Before(now) {
		return now
	}
	return latest
}

func forever(now time.Time) time.Time { return now.Add(24 * time.Hour) }

// held is one hold a client has.
type held struct {
	c       *client
	mu      sync.Mutex
	until   time.Time // the Until last recorded
	ids     []int64   // its records (one per key of a multi-key hold)
	lk      *redlock.Lock
	t       target
	granted time.Time
	call    time.Time // when its acquisition was called: a master that lost data since may have lost it
	key     string
}

// quorumEnd is, read now, until when a quorum of the masters keeps h: a
// master that is down, or lost data since h was granted, counts as
// keeping it for ever (what it forgot is the restart guard's business).
func (r *Run) quorumEnd(h *held) (now, end time.Time) {
	ends := make([]time.Time, len(r.S.Masters))
	r.W.Inspect(func(t time.Time) {
		now = t
		for i := range ends {
			m := r.W.Master(i)
			switch {
			case !m.Up() || r.lostSince(i, h.call):
				ends[i] = forever(t)
			default:
				ends[i] = h.t.end(m, t)
			}
		}
	})
	slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
	return now, ends[r.quorum-1]
}

// sample records whether h's Until lies within what a quorum of the
// masters keeps (until-within-expiry).
func (h *held) sample() {
	r := h.c.r
	before := h.lk.Until()
	now, end := r.quorumEnd(h)
	until := before
	if u := h.lk.Until(); u.Before(until) {
		until = u
	}
	if !now.Before(until) {
		return
	}
	for _, id := range h.ids {
		r.H.Sample(id, now, until, end)
	}
}

// grant records a granted hold: one record per key of keys (the checker's
// names), all with the template e, called at call.
func (c *client) grant(e checker.Event, keys []string, call time.Time, lk *redlock.Lock, t target, rf *ref) *held {
	r := c.r
	now := time.Now()
	until := lk.Until()
	if !until.After(now) {
		r.violate(checker.Violation{Invariant: ValidityAtGrant, Key: keys[0], Client: c.i, At: r.H.Offset(now),
			Detail: fmt.Sprintf("a lock was returned at %v with its Until at %v: no validity left", r.H.Offset(now), r.H.Offset(until))})
	}
	e.Client = c.i
	e.Token = lk.Fence()
	h := &held{c: c, lk: lk, t: t, granted: now, call: call, key: keys[0], until: until}
	for _, k := range keys {
		e.Key = k
		h.ids = append(h.ids, r.H.GrantCall(e, call, now, until))
	}
	if e.Owner == "" || strings.HasPrefix(e.Owner, "resume-") {
		// Its calls name its token in their tombstone key: an Extend's
		// lowering of Until is recorded when it is sent (onSend).
		r.track(lk.Token(), h)
	}
	if rf != nil {
		rf.id.Store(h.ids[0])
	}
	r.mu.Lock()
	r.grants++
	r.mu.Unlock()
	h.sample()
	return h
}

// attempt records an acquire that returned without the lock.
func (c *client) attempt(e checker.Event, keys []string, call time.Time, err error) {
	var mq *redlock.QuorumError
	if errors.As(err, &mq) && errors.Is(err, redlock.ErrUnavailable) && errors.Is(mq.NodeErrors, redlock.ErrInvalid) {
		c.r.violate(checker.Violation{Invariant: MisconfigurationAccepted, Key: keys[0], Client: c.i, At: c.r.H.Offset(time.Now()),
			Detail: "an acquisition that failed for a misconfigured master matches ErrUnavailable: " + err.Error()})
	}
	o := checker.Refused
	var q *redlock.QuorumError
	if !errors.As(err, &q) || q.Failed > 0 || q.Pending > 0 || q.Late || q.Cause != nil || q.Granted > 0 {
		o = checker.Unknown
	}
	e.Client = c.i
	now := time.Now()
	for _, k := range keys {
		e.Key = k
		c.r.H.Attempt(e, call, now, o)
	}
}

// release records that the holder begins to release h, now.
func (h *held) release() {
	now := time.Now()
	for _, id := range h.ids {
		h.c.r.H.Release(id, now)
	}
}

// extended records h's Until after an Extend (the observer records it for
// the first record; a multi-key hold's others here).
func (h *held) extended() {
	now := time.Now()
	until := h.lk.Until()
	for _, id := range h.ids[1:] {
		h.c.r.H.Extend(id, now, until)
	}
}

// noteUntil records h's Until at now when it changed since it was last
// recorded: an Extend lowers it the moment it is sent (it may land at
// once), not when it returns.
func (h *held) noteUntil() {
	u := h.lk.Until()
	h.mu.Lock()
	changed := !u.Equal(h.until)
	h.until = u
	h.mu.Unlock()
	if !changed {
		return
	}
	now := time.Now()
	for _, id := range h.ids {
		h.c.r.H.Extend(id, now, u)
	}
}
