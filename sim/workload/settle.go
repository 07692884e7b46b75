package workload

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
	"github.com/quorumlock/quorumlock/sim/master"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// Leftovers (nothing-left). An operation on a client's private key (no
// other client touches it) must leave the masters as it found them once it
// returned and its releases had their chance: every master is read before
// the call and after it settled, and anything of the lock's that differs
// (its key, a hash's holds, a reader, a wait mark, a fair registration, a
// permit: whatever the kind keeps; tombstones, fencing counters and fair
// ticket counters aside) is a leftover, unless the master may rightly keep
// it:
//   - the master lost data meanwhile (a power loss can bring back what was
//     released; a failover, what the replica had not yet been told);
//   - the client's link to it, or the master, was faulty for long enough
//     that the library's release retries ran out (about 4.5s);
//   - a reentrant acquire failed there: a reentrant lock releases only
//     where it was granted, and a hold that landed unanswered stays.
//   - an acquire that landed there after its caller gave up on it, where a
//     release of the client's to that master failed meanwhile (its retries
//     ran out before the acquire landed: by design, the key stays for its
//     TTL with no holder). An acquire that lands late with no failed
//     release to its master is no such case: its release, sent to every
//     master that did not refuse in time, either ran there (the tombstone
//     refuses the acquire, or the release deletes its key) or failed.
// The call has settled once nothing of the client's is in flight, every
// fault on its links and masters has ended, and 2.5s passed since the
// later of the call's return and the last fault's end: time for a failed
// release's retries (backoff up to 1s) to land; with a stall timeout
// longer than the default second, that much longer (a retry on a
// connection the fault left dead hangs until it). So a release that failed
// and was never sent again shows, and so does an acquire that landed
// after its release.

// state is what the masters hold of some keys: per master, the set of
// (key, part) the lock's state is made of.
type state [][]string

// snapshot reads the state of op's keys before a call on a private key
// (nil for a shared key: no check).
func (c *client) snapshot(op schedule.Op, rkeys []string) state {
	if op.Key >= 0 {
		return nil
	}
	return c.r.read(rkeys, nil)
}

// read reads the state of rkeys (and the keys derived from them). A part
// that an acquire which came late left on master m (see lateLeftover) is
// left out where excuseLate(m) says so (nil: nowhere).
func (r *Run) read(rkeys []string, excuseLate func(m int) bool) state {
	st := make(state, len(r.S.Masters))
	x := &r.exec
	r.W.Inspect(func(now time.Time) {
		for i := range st {
			m := r.W.Master(i)
			nowMs := m.Clock.Ms(now)
			var items []master.Item
			for _, k := range rkeys {
				for _, prefix := range []string{k, layout.SlotPrefix(k)} {
					for _, it := range m.Dump(now, prefix) {
						if it.Key != k && !strings.HasPrefix(it.Key, layout.SlotPrefix(k)) {
							continue // another key that shares the prefix
						}
						items = append(items, it)
					}
				}
			}
			// Readers and fair registrations live by their scores: one
			// whose score passed is gone (its sorted set is cleaned up by
			// the next call).
			expiry := map[string]float64{}
			for _, it := range items {
				if strings.HasSuffix(it.Key, ":fair:expiry") {
					for _, z := range it.Zset {
						expiry[strings.TrimSuffix(it.Key, ":expiry")+":queue "+z.Member] = z.Score
					}
				}
			}
			var parts []string
			late := excuseLate != nil && excuseLate(i)
			for _, it := range items {
				live := it.Zset[:0:0]
				for _, z := range it.Zset {
					switch {
					case strings.HasSuffix(it.Key, ":r"), strings.HasSuffix(it.Key, ":fair:expiry"):
						if int64(z.Score) <= nowMs {
							continue
						}
					case strings.HasSuffix(it.Key, ":fair:queue"):
						if e, ok := expiry[it.Key+" "+z.Member]; !ok || int64(e) <= nowMs {
							continue
						}
					}
					live = append(live, z)
				}
				if it.Type == "zset" {
					it.Zset = live
				}
				for _, p := range describe(it) {
					if !late || !x.lateLeftover(i, p) {
						parts = append(parts, p)
					}
				}
			}
			slices.Sort(parts)
			st[i] = slices.Compact(parts)
		}
	})
	return st
}

// noOnesState reports whether key k holds no one's state: a tombstone, a
// fencing counter or a fair ticket counter.
func noOnesState(k string) bool {
	return layout.IsTomb(k) || strings.HasSuffix(k, ":fence") || strings.HasSuffix(k, ":fair:ticket")
}

// describe lists what an item holds, as comparable parts; the keys left
// by design are skipped.
func describe(it master.Item) []string {
	k := it.Key
	if noOnesState(k) {
		return nil
	}
	switch it.Type {
	case "hash":
		out := make([]string, 0, len(it.Hash))
		for _, f := range slices.Sorted(maps.Keys(it.Hash)) {
			out = append(out, k+" field "+f+"="+it.Hash[f])
		}
		return out
	case "zset":
		out := make([]string, 0, len(it.Zset))
		for _, z := range it.Zset {
			out = append(out, k+" member "+z.Member)
		}
		return out
	}
	return []string{k + "=" + it.Str}
}

// settle waits until the call of op (called at call) settled, then
// records what it left (nothing-left).
func (c *client) settle(op schedule.Op, before state, call time.Time, rf *ref) {
	if before == nil {
		return
	}
	r := c.r
	rkeys := []string{r.S.Lib.Prefix + keyName(op.Kind, op.Key, c.i)}
	if op.Kind == schedule.Multi {
		rkeys = []string{r.S.Lib.Prefix + multiKey(0, c.i, true), r.S.Lib.Prefix + multiKey(1, c.i, true)}
	}
	returned := time.Now()
	c.awaitSettled(returned)
	after := r.read(rkeys, func(m int) bool { return c.releaseFailed(m, call, time.Now()) })
	now := time.Now()
	for i := range after {
		left := diff(before[i], after[i])
		if len(left) == 0 {
			continue
		}
		if why := c.excused(op, i, call, now, rf); why != "" {
			continue
		}
		r.H.Remain(c.i, keyName(op.Kind, op.Key, c.i), now,
			fmt.Sprintf("master %d keeps %s, %v after the %s call (called at %v) returned with no fault on the link since %v",
				i, strings.Join(left, ", "), now.Sub(returned), op.Kind, r.H.Offset(call), r.H.Offset(call)))
	}
}

// awaitSettled waits until nothing of the client's is in flight, no fault
// touches it, and 2.5s passed since both from and the last fault's end
// (and what the schedule's stall timeout adds to the default's second:
// a release sent on a connection that went dead in the fault hangs that
// long before it is sent again, see stallPast).
func (c *client) awaitSettled(from time.Time) {
	r := c.r
	for {
		quiet, ok := r.W.QuietSince(c.i)
		if ok {
			wait := from
			if quiet.After(wait) {
				wait = quiet
			}
			wait = wait.Add(2500*time.Millisecond + c.r.stallPast())
			if d := time.Until(wait); d > 0 {
				time.Sleep(d)
				continue
			}
			if r.W.Idle(c.i) {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// excused says why master i may keep what the call left ("" when it may
// not).
func (c *client) excused(op schedule.Op, i int, call, now time.Time, rf *ref) string {
	r := c.r
	var faulty time.Duration
	for _, sp := range r.W.Spans(c.i, i, call, now) {
		if sp.Lossy {
			return "the master lost data"
		}
		faulty += sp.Until.Sub(sp.From)
	}
	if faulty >= 4*time.Second {
		return "faults long enough for the release's retries to run out"
	}
	if op.Kind == schedule.Reentrant && c.failedOn(i, call, now) {
		// A reentrant lock releases only where it was granted, and a
		// hold's release is retried only for the hold's own TTL, while
		// its field lives as long as the owner's hash (see the README's
		// findings): the chaos suite's rule, a failed call there excuses.
		return "a reentrant call failed there"
	}
	return ""
}

// failedOn reports whether a call of the client to master i failed in
// [from, to].
func (c *client) failedOn(i int, from, to time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.failures {
		if f.master == i && !f.at.Before(from) && !f.at.After(to) {
			return true
		}
	}
	return false
}

// releaseFailed reports whether a release (an Unlock's, a failed
// attempt's, or one sent again) of the client to master i failed in
// [from, to].
func (c *client) releaseFailed(i int, from, to time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.failures {
		if f.master == i && (f.op == "unlock" || f.op == "release") && !f.at.Before(from) && !f.at.After(to) {
			return true
		}
	}
	return false
}

// diff lists the parts of after that before lacks.
func diff(before, after []string) []string {
	var out []string
	for _, p := range after {
		if _, found := slices.BinarySearch(before, p); !found {
			out = append(out, p)
		}
	}
	return out
}

// FinalCheck runs once every client returned and the World healed and
// settled: no master may hold a lock that nobody holds (a shared key's
// leftovers), beyond what the masters may rightly keep (see settle). It
// records each as a Remained event.
func (r *Run) FinalCheck() {
	now := time.Now()
	var prefixes []string
	for k, n := range r.S.Keys {
		for j := range n {
			if k == schedule.Multi {
				prefixes = append(prefixes, r.S.Lib.Prefix+multiKey(j, 0, false))
				continue
			}
			prefixes = append(prefixes, r.S.Lib.Prefix+keyName(k, j, 0))
		}
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	st := r.read(prefixes, func(int) bool { return true })
	r.mu.Lock()
	for i, parts := range st {
		st[i] = slices.DeleteFunc(parts, func(p string) bool {
			_, v, _ := strings.Cut(p, "=")
			return r.abandoned[v]
		})
	}
	r.mu.Unlock()
	for i, parts := range st {
		if len(parts) == 0 {
			continue
		}
		if r.excusedAll(i) {
			continue
		}
		r.H.Remain(-1, "*", now, fmt.Sprintf("master %d keeps %s once every client returned and every release settled", i, strings.Join(parts, ", ")))
	}
}

// excusedAll reports whether master i may keep leftovers of any client:
// a release to it failed, it lost data, or some link to it was faulty long
// enough that retries ran out, or a reentrant lock was used (its failed
// acquires may keep holds).
func (r *Run) excusedAll(i int) bool {
	if _, ok := r.S.Keys[schedule.Reentrant]; ok {
		return true
	}
	// The chaos suite's rule: a master to which a release failed may
	// keep what it held (its retries last the lock's first TTL, which an
	// Extend may have outgrown: see the README's findings).
	for _, c := range r.clients {
		if r.StrictLeftovers {
			break
		}
		c.mu.Lock()
		failed := slices.ContainsFunc(c.failures, func(f nodeFailure) bool {
			return f.master == i && (f.op == "unlock" || f.op == "release")
		})
		c.mu.Unlock()
		if failed {
			return true
		}
	}
	for c := range r.S.Clients {
		var faulty time.Duration
		for _, sp := range r.W.Spans(c, i, r.start, time.Now()) {
			if sp.Lossy {
				return true
			}
			faulty += sp.Until.Sub(sp.From)
		}
		if faulty >= 4*time.Second {
			return true
		}
	}
	return false
}

// lateLeftover reports whether part (as describe gives it) belongs to an
// acquisition whose first command on master m came after its caller gave
// up: an acquire held up in the network (a partition) past its release's
// retries lands with no holder and keeps its key for its TTL, by design
// ("a delay for the others, never a second holder"). One whose release
// landed there first is no such case: the release's tombstone must refuse
// it (acquire-ignores-tombstone).
func (x *execState) lateLeftover(m int, part string) bool {
	for _, id := range partIDs(part) {
		if x.firstLate(m, id) {
			return true
		}
	}
	return false
}

// partIDs are the identities a part may name: a string's value, a hash's
// hold id, a sorted set's member.
func partIDs(part string) []string {
	var ids []string
	if _, v, ok := strings.Cut(part, "="); ok {
		ids = append(ids, v)
	}
	if _, f, ok := strings.Cut(part, " field "+layout.HoldPrefix); ok {
		f, _, _ = strings.Cut(f, "=")
		ids = append(ids, f)
	}
	if _, m, ok := strings.Cut(part, " member "); ok {
		ids = append(ids, m)
	}
	return ids
}

// stallPast is how much longer than the default (1s) the schedule's stall
// timeout is: a call on a connection that a fault left dead waits that
// long before it fails and its release is retried on a new one.
func (r *Run) stallPast() time.Duration {
	return max(r.S.Net.Stall.D()-time.Second, 0)
}
