package workload

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
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

// tombstone reports whether key is a tombstone (left by design).
func tombstone(key string) bool { return strings.Contains(key, ":tomb:") }

// added describes what now holds that before did not: new keys, new
// items, and items of a string or hash whose value changed; and every
// tombstone without a TTL. It lists them in order, at most a few.
func added(before, now keyState) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(now)) {
		ki := now[k]
		switch {
		case lasting(k):
			continue
		case tombstone(k):
			if ki.pttl < 0 {
				out = append(out, fmt.Sprintf("tombstone %s without a TTL", k))
			}
			continue
		}
		old, ok := before[k]
		if !ok {
			out = append(out, fmt.Sprintf("%s %s %v", ki.typ, k, ki.items))
			continue
		}
		for _, it := range slices.Sorted(maps.Keys(ki.items)) {
			v := ki.items[it]
			ov, had := old.items[it]
			switch {
			case !had:
				out = append(out, fmt.Sprintf("%s of %s %s", itemText(it, v), ki.typ, k))
			case v != ov && (ki.typ == "string" || ki.typ == "hash"):
				out = append(out, fmt.Sprintf("%s of %s %s (was %q)", itemText(it, v), ki.typ, k, ov))
			}
		}
	}
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("and %d more", len(out)-4))
	}
	return out
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
// the state to compare a later call's leftovers with.
func (m *masters) stableStates(ctx context.Context, pattern string) []keyState {
	deadline := time.Now().Add(2 * NodeTimeout)
	for {
		sts := m.states(ctx, pattern)
		if same(sts) || time.Now().After(deadline) || ctx.Err() != nil {
			return sts
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// same reports whether the masters that answered hold the same keys and
// items (values aside).
func same(sts []keyState) bool {
	var first keyState
	for _, st := range sts {
		if st == nil {
			continue
		}
		if first == nil {
			first = st
			continue
		}
		if len(added(first, st)) > 0 || len(added(st, first)) > 0 {
			return false
		}
	}
	return true
}

// restored waits, up to within, until no master holds anything of the
// keys of pattern that it did not hold in before (read before a call of c
// on them), and records a Remained for each master that still does and is
// not excused: none of the releases of c (nor, with acquires, its
// acquires) to it failed since since, and none of its acquires from
// earlier (from early to since; zero: none) failed there, whose writes may
// have landed there after before was read.
func (c *Client) restored(ctx context.Context, name, pattern string, before []keyState, what string, since, early time.Time, acquires bool, within time.Duration) {
	deadline := time.Now().Add(within)
	for {
		left := map[int][]string{}
		for j, st := range c.env.direct.states(ctx, pattern) {
			if st == nil || before[j] == nil || excused([]*Client{c}, j, since, acquires) ||
				(!early.IsZero() && c.obs.failedBetween(j, early, since, opLock)) {
				continue
			}
			if a := added(before[j], st); len(a) > 0 {
				left[j] = a
			}
		}
		if len(left) == 0 || ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			for _, j := range slices.Sorted(maps.Keys(left)) {
				c.env.History.Remain(c.ID, name, time.Now(), fmt.Sprintf("%s: master %d still holds %s %v after it returned, and no release to it failed",
					what, j, strings.Join(left[j], "; "), within))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
