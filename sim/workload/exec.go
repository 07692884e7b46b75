package workload

import (
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock/layout"
	"github.com/quorumlock/quorumlock/sim/master"
	"github.com/quorumlock/quorumlock/sim/world"
)

// Checks made after every command a master ran, at that instant, with the
// World's lock held (so they read the masters directly, never through the
// World's methods):
//   - no-reader-beside-writer: a read-write lock's master never holds a
//     live reader beside its writer;
//   - fair registration: the first moment a fair waiter is registered and
//     live on a quorum of the masters is recorded (checker.Register), for
//     fair-order;
//   - landed-after-release: once a command left an acquisition's
//     tombstone on a master, no later command of that acquisition leaves
//     state naming it there (unless the master lost data since).

type execState struct {
	r          *Run
	registered map[string]bool // fair waiter ids seen on a quorum
	// late[m][id]: the first command of the acquisition (or waiter) id
	// that master m ran had been given up by its caller (it came late).
	late []map[string]bool
	// tombed[m][id]: when a command first left id's tombstone on master m;
	// landed: the ids whose state appeared after it (reported once).
	tombed []map[string]time.Time
	landed map[string]bool
	// before: the live ids in each key of the command about to run
	// (beforeExec), for removed-by-another; removed: the ids reported.
	before  map[string]map[string]bool
	removed map[string]bool
	// waiting[queue][id]: the fair waiters registered on a quorum whose
	// registration has not yet lapsed (lapse).
	waiting map[string]map[string]fairWaiter
}

// fairWaiter is a fair waiter registered on a quorum: its client, call
// and keys.
type fairWaiter struct {
	client       int
	call         time.Time
	lock, expiry string
}

func (x *execState) init(r *Run) {
	x.r = r
	x.registered = map[string]bool{}
	x.late = make([]map[string]bool, len(r.S.Masters))
	x.tombed = make([]map[string]time.Time, len(r.S.Masters))
	for i := range x.late {
		x.late[i] = map[string]bool{}
		x.tombed[i] = map[string]time.Time{}
	}
	x.landed = map[string]bool{}
	x.removed = map[string]bool{}
	x.waiting = map[string]map[string]fairWaiter{}
}

// ownID is the identity of the acquisition (or waiter) whose command e
// is: the one its tombstone names; "" for a command without one.
func ownID(e world.Exec) string {
	for _, k := range e.Keys {
		if _, id, ok := strings.Cut(k, layout.TombInfix); ok {
			return id
		}
	}
	return ""
}

// liveIDs returns the ids that live state under key k names on master m
// at now: a string's value, a holder record's token, a hash's fields and
// values (but a hold's "1"), a sorted set's members that are live (a reader whose expiry, its
// score, has not passed; a fair waiter whose registration has not
// expired).
func (x *execState) liveIDs(m *master.Master, now time.Time, k string) map[string]bool {
	ids := map[string]bool{}
	it, ok := m.Item(now, k)
	if !ok {
		return ids
	}
	nowMs := m.Clock.Ms(now)
	switch {
	case it.Type == "hash" && strings.HasSuffix(k, layout.HolderSuffix):
		ids[it.Hash["token"]] = true // a holder record is its holder's state
	case it.Type == "zset" && strings.HasSuffix(k, ":r"):
		for _, z := range it.Zset {
			if int64(z.Score) > nowMs {
				ids[z.Member] = true
			}
		}
	case it.Type == "zset" && (strings.HasSuffix(k, ":fair:queue") || strings.HasSuffix(k, ":fair:expiry")):
		expiry := strings.TrimSuffix(strings.TrimSuffix(k, ":fair:queue"), ":fair:expiry") + ":fair:expiry"
		for _, z := range it.Zset {
			if exp, ok := m.ZScore(now, expiry, z.Member); ok && int64(exp) > nowMs {
				ids[z.Member] = true
			}
		}
	default:
		itemIDs(ids, it)
	}
	return ids
}

// itemIDs adds to ids what partIDs reads from describe's lines of it (but
// a hold's "1"), without making the lines: it runs before and after every
// command.
func itemIDs(ids map[string]bool, it master.Item) {
	k := it.Key
	if noOnesState(k) {
		return // no one's state, as describe says
	}
	add := func(id string) {
		if id != "1" {
			ids[id] = true
		}
	}
	switch it.Type {
	case "string":
		add(it.Str)
	case "hash":
		for f, v := range it.Hash {
			add(v)
			if id, ok := strings.CutPrefix(f, layout.HoldPrefix); ok {
				add(id)
			}
		}
	case "zset":
		for _, z := range it.Zset {
			add(z.Member)
		}
	}
}

// anyOf reports whether ids holds one of mine.
func anyOf(ids, mine map[string]bool) bool {
	for id := range ids {
		if mine[id] {
			return true
		}
	}
	return false
}

// perMember reports whether the members of key k are each their own
// acquisition's (a read-write lock's readers, a fair queue), not one
// owner's.
func perMember(k string) bool {
	return strings.HasSuffix(k, ":r") || strings.HasSuffix(k, ":fair:queue") || strings.HasSuffix(k, ":fair:expiry")
}

// beforeExec notes the live ids in each key of the command about to run,
// for removed-by-another.
func (x *execState) beforeExec(e world.Exec) {
	for _, k := range e.Keys {
		if strings.HasSuffix(k, ":fair:queue") {
			x.lapse(e.At, k)
		}
	}
	x.before = nil
	if e.Src == "" || ownID(e) == "" {
		return
	}
	m := x.r.W.Master(e.Master)
	x.before = map[string]map[string]bool{}
	for _, k := range e.Keys {
		if noOnesState(k) {
			continue
		}
		x.before[k] = x.liveIDs(m, e.At, k)
	}
}

// removedByAnother checks removed-by-another for the command e, which
// ran: every id live in one of its keys before it, and gone after, is one
// of its own (its tombstone's, or one its arguments name), or one whose
// key held live state of its own before (but for keys whose members are
// each their own acquisition's: readers, a fair queue).
func (x *execState) removedByAnother(e world.Exec) {
	own := ownID(e)
	if x.before == nil || own == "" {
		return
	}
	// The command's own identities: its tombstone's, and whatever its
	// arguments name (a writer's waiting id, the same across its
	// attempts; a reentrant owner).
	mine := map[string]bool{own: true}
	for _, a := range e.Args {
		mine[a] = true
	}
	m := x.r.W.Master(e.Master)
	for k, before := range x.before {
		if len(before) == 0 || !perMember(k) && anyOf(before, mine) {
			continue
		}
		after := x.liveIDs(m, e.At, k)
		var lock map[string]bool // a holder record's lock key's ids, after
		if strings.HasSuffix(k, layout.HolderSuffix) && len(e.Keys) > 1 {
			lock = x.liveIDs(m, e.At, e.Keys[1])
		}
		for id := range before {
			if mine[id] || after[id] || x.removed[id] {
				continue
			}
			if lock != nil && !lock[id] {
				continue // a holder record goes with its lock (KEYS[2])
			}
			x.removed[id] = true
			x.r.violate(checker.Violation{Invariant: RemovedByAnother, Key: x.logical(k), Client: e.Client, At: x.r.H.Offset(e.At),
				Detail: fmt.Sprintf("master %d: a command of %s removed %s's live state from %s, where %s had none", e.Master, own, id, k, own)})
		}
	}
	x.before = nil
}

// wrote reports whether the command e left state naming id on its master
// (a release leaves none: only its tombstone).
func (x *execState) wrote(e world.Exec, id string) bool {
	m := x.r.W.Master(e.Master)
	for _, k := range e.Keys {
		if layout.IsTomb(k) {
			continue
		}
		it, ok := m.Item(e.At, k)
		if !ok {
			continue
		}
		for _, p := range describe(it) {
			for _, pid := range partIDs(p) {
				if pid == id {
					return true
				}
			}
		}
	}
	return false
}

// firstLate reports whether the first command of id that master m ran
// came after its caller gave up, and left state naming id. Call with the World's lock held (Inspect).
func (x *execState) firstLate(m int, id string) bool { return x.late[m][id] }

// afterRelease checks landed-after-release for the command e of the
// acquisition id, whose tombstone is tomb: once the tombstone was left on
// the master, the acquisition's state must not appear there, and it is
// noted when this command left it.
func (x *execState) afterRelease(e world.Exec, tomb, id string) {
	if x.landed[id] {
		return
	}
	m := x.r.W.Master(e.Master)
	_, exists := m.ExpireAt(e.At, tomb)
	at, tombed := x.tombed[e.Master][id]
	if tombed && x.r.lostSince(e.Master, at) {
		delete(x.tombed[e.Master], id) // the master may have lost the tombstone
		tombed = false
	}
	if (tombed || exists) && x.wrote(e, id) {
		x.landed[id] = true
		first := tomb
		for _, k := range e.Keys {
			if !layout.IsTomb(k) {
				first = k
				break
			}
		}
		since := "by this command"
		if tombed {
			since = fmt.Sprintf("at %v", x.r.H.Offset(at))
		}
		x.r.violate(checker.Violation{Invariant: LandedAfterRelease, Key: x.logical(first), Client: e.Client, At: x.r.H.Offset(e.At),
			Detail: fmt.Sprintf("master %d holds state of acquisition %s after a command left its tombstone there (%s); late=%v", e.Master, id, since, e.Late)})
		return
	}
	if exists && !tombed {
		x.tombed[e.Master][id] = e.At
	}
}

// logical returns the checker's name of a lock from one of its Redis keys
// ("{rw0}:w" -> "rw0").
func (x *execState) logical(rkey string) string {
	k := strings.TrimPrefix(rkey, x.r.S.Lib.Prefix)
	if strings.HasPrefix(k, "{") {
		if i := strings.IndexByte(k, '}'); i > 0 {
			return k[1:i]
		}
	}
	return k
}

func (x *execState) onExec(e world.Exec) {
	x.removedByAnother(e)
	// Every acquisition (and fair waiter) names its tombstone in the
	// call's keys: note whether the first of its commands a master ran
	// came late.
	for _, k := range e.Keys {
		if _, id, ok := strings.Cut(k, layout.TombInfix); ok {
			if _, seen := x.late[e.Master][id]; !seen {
				x.late[e.Master][id] = e.Late && x.wrote(e, id)
			}
			x.afterRelease(e, k, id)
		}
	}
	if e.Src == "" || len(e.Keys) < 2 {
		return
	}
	switch {
	case strings.HasSuffix(e.Keys[1], ":w") && len(e.Keys) >= 4:
		x.coexist(e, e.Keys[1], e.Keys[2])
	case len(e.Keys) >= 6 && strings.HasSuffix(e.Keys[2], ":fair:queue") && len(e.Args) >= 3:
		x.fair(e)
	}
}

// coexist checks master e.Master for a live reader beside the writer.
func (x *execState) coexist(e world.Exec, writer, readers string) {
	m := x.r.W.Master(e.Master)
	now := e.At
	if _, ok := m.ExpireAt(now, writer); !ok {
		return
	}
	nowMs := m.Clock.Ms(now)
	it, _ := m.Item(now, readers)
	for _, z := range it.Zset {
		if int64(z.Score) > nowMs {
			x.r.H.Coexist(e.Client, x.logical(writer), now,
				fmt.Sprintf("master %d holds writer %s beside live reader %s (expires at %d, now %d)", e.Master, writer, z.Member, int64(z.Score), nowMs))
			return
		}
	}
}

// fair records the first moment the waiter of a fair acquire is live on a
// quorum of the masters.
func (x *execState) fair(e world.Exec) {
	id := e.Args[2]
	if x.registered[id] {
		return
	}
	queue, expiry, lockKey := e.Keys[2], e.Keys[3], e.Keys[1]
	n := 0
	for i := range x.r.S.Masters {
		m := x.r.W.Master(i)
		if !m.Up() {
			continue
		}
		if _, ok := m.ZScore(e.At, queue, id); !ok {
			continue
		}
		if exp, ok := m.ZScore(e.At, expiry, id); ok && int64(exp) > m.Clock.Ms(e.At) {
			n++
		}
	}
	if n < x.r.quorum {
		return
	}
	x.registered[id] = true
	c := x.r.clients[e.Client]
	c.mu.Lock()
	call, ok := c.inFair[lockKey]
	c.mu.Unlock()
	if ok {
		x.r.H.Register(e.Client, x.logical(lockKey), call, e.At)
		if x.waiting[queue] == nil {
			x.waiting[queue] = map[string]fairWaiter{}
		}
		x.waiting[queue][id] = fairWaiter{client: e.Client, call: call, lock: lockKey, expiry: expiry}
	}
}

// lapse ends, before a command on the fair queue runs at now, the wait
// of every registered waiter there whose registration is no longer live
// on a quorum of the masters (it expired: its client was cut off or
// paused; a master lost it): from then on a later waiter may be served
// first, and fair-order judges the waiter only up to here (recorded as
// the end of its call). So fair order is judged under faults too.
func (x *execState) lapse(now time.Time, queue string) {
	for id, w := range x.waiting[queue] {
		n := 0
		for i := range x.r.S.Masters {
			m := x.r.W.Master(i)
			if !m.Up() {
				continue
			}
			if _, ok := m.ZScore(now, queue, id); !ok {
				continue
			}
			if exp, ok := m.ZScore(now, w.expiry, id); ok && int64(exp) > m.Clock.Ms(now) {
				n++
			}
		}
		if n < x.r.quorum {
			x.r.H.Crash(w.client, x.logical(w.lock), w.call, now)
			delete(x.waiting[queue], id)
		}
	}
}
