package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// A failed call must leave nothing of its own on any master, whatever its
// kind wrote: a lock key, a waiting writer's mark, a fair waiter's
// registration, a permit, a key of a multi-key set, a reentrant hold. The
// harness does not need to know where each kind keeps what: on keys that
// only one client uses (its "own" keys), it reads everything those keys
// hold on every master before the call and after it, and whatever appeared
// in between, and stayed once the call and its releases returned, is the
// call's leftover. Counters that outlive their locks by design (fencing
// counters, a fair lock's ticket counter) are not compared; tombstones
// ("...:tomb:...") are left by design, and must carry a TTL.

// keyItems is what one key holds: its type, its items (a string's value
// under "", a hash's fields and values, a set's or a sorted set's members,
// a list's elements by index) and its PTTL (-1: none).
type keyItems struct {
	typ   string
	items map[string]string
	pttl  int64
}

// keyState is what one master holds of the keys of a pattern.
type keyState map[string]keyItems

// stateScript returns, for every key matching ARGV[1], its name, type,
// PTTL and items (as keyItems describes them, flattened).
var stateScript = redis.NewScript(0, `
local out = {}
local cursor = '0'
repeat
  local r = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    local typ = redis.call('TYPE', k).ok
    local items = {}
    if typ == 'string' then
      items = {'', redis.call('GET', k)}
    elseif typ == 'hash' then
      items = redis.call('HGETALL', k)
    elseif typ == 'zset' or typ == 'set' then
      local ms
      if typ == 'zset' then ms = redis.call('ZRANGE', k, 0, -1) else ms = redis.call('SMEMBERS', k) end
      for _, m in ipairs(ms) do
        items[#items + 1] = m
        items[#items + 1] = ''
      end
    elseif typ == 'list' then
      for i, m in ipairs(redis.call('LRANGE', k, 0, -1)) do
        items[#items + 1] = tostring(i)
        items[#items + 1] = m
      end
    end
    out[#out + 1] = {k, typ, redis.call('PTTL', k), items}
  end
until cursor == '0'
return out
`)

// states reads, on every master at once, what the keys matching pattern
// hold; a master that did not answer has a nil state.
func (m *masters) states(ctx context.Context, pattern string) []keyState {
	return each(ctx, m, func(ctx context.Context, c redis.Conn) (keyState, error) {
		return parseState(stateScript.DoContext(ctx, c, pattern))
	})
}

// parseState reads stateScript's reply.
func parseState(reply any, err error) (keyState, error) {
	keys, err := redis.Values(reply, err)
	if err != nil {
		return nil, err
	}
	st := keyState{}
	for _, k := range keys {
		f, err := redis.Values(k, nil)
		if err != nil || len(f) != 4 {
			return nil, fmt.Errorf("workload: a key's state %v: %v", k, err)
		}
		name, _ := redis.String(f[0], nil)
		typ, _ := redis.String(f[1], nil)
		pttl, _ := redis.Int64(f[2], nil)
		flat, _ := redis.Strings(f[3], nil)
		ki := keyItems{typ: typ, pttl: pttl, items: map[string]string{}}
		for i := 0; i+1 < len(flat); i += 2 {
			ki.items[flat[i]] = flat[i+1]
		}
		st[name] = ki
	}
	return st, nil
}

// lasting reports whether key is state that outlives its locks by design
// and is not compared: a fencing counter, a fair lock's ticket counter.
func lasting(key string) bool {
	return strings.HasSuffix(key, ":fence") || strings.HasSuffix(key, ":fair:ticket")
}

// tombstone reports whether key is a tombstone (left by design, with a
// TTL; see redlock/layout).
func tombstone(key string) bool { return layout.IsTomb(key) }

// change is one thing a master holds that it did not hold before.
type change struct {
	id   string // the key and the item
	text string
	pttl int64 // of its key: -1 none
}

// added returns what now holds that before did not, in order: new keys,
// new items, and items of a string or hash whose value changed; and every
// tombstone without a TTL.
func added(before, now keyState) []change {
	var out []change
	for _, k := range slices.Sorted(maps.Keys(now)) {
		ki := now[k]
		switch {
		case lasting(k):
			continue
		case tombstone(k):
			if ki.pttl < 0 {
				out = append(out, change{id: k, text: fmt.Sprintf("tombstone %s without a TTL", k), pttl: -1})
			}
			continue
		}
		old, ok := before[k]
		if !ok {
			out = append(out, change{id: k, text: fmt.Sprintf("%s %s %v", ki.typ, k, ki.items), pttl: ki.pttl})
			continue
		}
		for _, it := range slices.Sorted(maps.Keys(ki.items)) {
			v := ki.items[it]
			ov, had := old.items[it]
			switch {
			case !had:
				out = append(out, change{id: k + "\x00" + it, text: fmt.Sprintf("%s of %s %s", itemText(it, v), ki.typ, k), pttl: ki.pttl})
			case v != ov && (ki.typ == "string" || ki.typ == "hash"):
				out = append(out, change{id: k + "\x00" + it, text: fmt.Sprintf("%s of %s %s (was %q)", itemText(it, v), ki.typ, k, ov), pttl: ki.pttl})
			}
		}
	}
	return out
}

// texts describes changes, at most a few.
func texts(cs []change) string {
	var out []string
	for i, c := range cs {
		if i == 4 {
			out = append(out, fmt.Sprintf("and %d more", len(cs)-4))
			break
		}
		out = append(out, c.text)
	}
	return strings.Join(out, "; ")
}

func itemText(item, value string) string {
	switch {
	case item == "":
		return fmt.Sprintf("value %q", value)
	case value == "":
		return fmt.Sprintf("member %q", item)
	}
	return fmt.Sprintf("field %q = %q", item, value)
}

// stableStates reads the states of pattern until every master that
// answers holds the same keys and items (the calls that wrote them have
// landed everywhere they will land in time), for up to 2 node timeouts:
// the state to compare a later call's leftovers with. A master that still
// differs from most of the others then (a write may yet land there) is
// left out, as one that did not answer.
func (m *masters) stableStates(ctx context.Context, pattern string) []keyState {
	deadline := time.Now().Add(2 * NodeTimeout)
	for {
		sts := m.states(ctx, pattern)
		if lagging(sts) == nil || ctx.Err() != nil {
			return sts
		}
		if time.Now().After(deadline) {
			for _, j := range lagging(sts) {
				sts[j] = nil
			}
			return sts
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// alike reports whether two states hold the same keys and items (values
// aside).
func alike(a, b keyState) bool { return len(added(a, b)) == 0 && len(added(b, a)) == 0 }

// lagging returns the masters (that answered) whose state differs from the
// state most of them hold; none when they all hold the same.
func lagging(sts []keyState) []int {
	best, most := -1, 0
	for i, a := range sts {
		n := 0
		for _, b := range sts {
			if a != nil && b != nil && alike(a, b) {
				n++
			}
		}
		if n > most {
			best, most = i, n
		}
	}
	if best < 0 {
		return nil
	}
	var out []int
	for j, st := range sts {
		if st != nil && !alike(sts[best], st) {
			out = append(out, j)
		}
	}
	return out
}

// restored waits, up to SettleWithin once the commands of c reached the
// masters (awaitDelivered), until no master holds anything of the keys of
// pattern that it did not hold in before (read before a call of c on
// them), and records a Remained for each master that still does, or that
// kept something until it expired rather than lose it before (a leftover
// that expires, such as a fair registration, must not pass for one that
// a slow release removed). A master is excused when one of the releases
// of c (or, with acquires, one of its acquires) to it failed since since,
// or when an acquire of it failed there between early and since (early
// zero: none), whose write may have landed after before was read; and,
// as in remains, while a fault held back the traffic of c with it.
func (c *Client) restored(ctx context.Context, name, pattern string, before []keyState, what string, since, early time.Time, acquires bool) {
	c.env.awaitDelivered(ctx, c.ID)
	cs := []*Client{c}
	deadline := time.Now().Add(SettleWithin)
	lives := map[int]map[string]*lifespan{} // per master, each change seen
	expired := map[int][]string{}           // per master, the changes that stayed until they expired
	for {
		sts := c.env.direct.states(ctx, pattern)
		at := time.Now()
		left := map[int][]change{}
		onItsWay := false // a master holds a change while a release to it may be on its way
		for j, st := range sts {
			if st == nil || before[j] == nil || excused(cs, j, since, acquires) ||
				(!early.IsZero() && c.obs.failedBetween(j, early, since, opLock)) {
				continue
			}
			now := added(before[j], st)
			if lives[j] == nil {
				lives[j] = map[string]*lifespan{}
			}
			present := map[string]bool{}
			for _, ch := range now {
				present[ch.id] = true
				if lives[j][ch.id] == nil {
					lives[j][ch.id] = &lifespan{seen: at}
				}
				lives[j][ch.id].note(at.Add(time.Duration(ch.pttl)*time.Millisecond), ch.pttl < 0)
			}
			for id, l := range lives[j] {
				if present[id] {
					continue
				}
				if l.expiredBy(at) && !c.env.heldAt(cs, j, l.expires.Add(-expirySlack), l.expires) {
					expired[j] = append(expired[j], strings.ReplaceAll(id, "\x00", " "))
				}
				delete(lives[j], id)
			}
			switch {
			case len(now) == 0:
			case c.env.heldAt(cs, j, at):
				onItsWay = true
			default:
				left[j] = now
			}
		}
		done := len(left) == 0 && !onItsWay || time.Now().After(deadline) || ctx.Err() != nil
		if done && ctx.Err() == nil && len(left)+len(expired) > 0 {
			// A release still on its way may be failing (see unexcused).
			keep := c.unexcused(ctx, slices.Sorted(maps.Keys(expired)), cs, since, acquires)
			keep = append(keep, c.unexcused(ctx, slices.Sorted(maps.Keys(left)), cs, since, acquires)...)
			for _, j := range slices.Sorted(maps.Keys(expired)) {
				if slices.Contains(keep, j) {
					c.env.History.Remain(c.ID, name, at, fmt.Sprintf("%s: master %d kept %s until it expired, and no release to it failed",
						what, j, strings.Join(expired[j], "; ")))
				}
			}
			for _, j := range slices.Sorted(maps.Keys(left)) {
				if slices.Contains(keep, j) {
					c.env.History.Remain(c.ID, name, at, fmt.Sprintf("%s: master %d still holds %s %v after it returned, and no release to it failed",
						what, j, texts(left[j]), SettleWithin))
				}
			}
		}
		if done {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
