package workload

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/redlock"
)

// env starts three masters and an Env with two clients over them.
func env(t *testing.T) *Env {
	t.Helper()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3})
	e, err := NewEnv(c, EnvConfig{Clients: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// on runs one command on master j, directly.
func on(t *testing.T, e *Env, j int, cmd string, args ...any) {
	t.Helper()
	err := e.direct.on(context.Background(), j, func(ctx context.Context, c redis.Conn) error {
		_, err := redis.DoContext(c, ctx, cmd, args...)
		return err
	})
	if err != nil {
		t.Fatalf("%s on master %d: %v", cmd, j, err)
	}
}

// own starts an Env (env) and names, for client 0, the lock name, its
// Redis key and the pattern of everything kept under it.
func own(t *testing.T, name string) (e *Env, c *Client, key, pattern string) {
	t.Helper()
	e = env(t)
	key = e.Key(name)
	return e, e.clients[0], key, "*" + key + "*"
}

// of returns the events of kind k.
func of(e *Env, k checker.Kind) []checker.Event {
	var out []checker.Event
	for _, ev := range e.History.Events() {
		if ev.Kind == k {
			out = append(out, ev)
		}
	}
	return out
}

// What appears on the keys of a pattern after a snapshot is a leftover on
// each master where it appeared, unless a release to that master failed;
// tombstones are left alone when they carry a TTL, and so are the
// counters that outlive their locks.
func TestRestoredFindsWhatACallLeft(t *testing.T) {
	name := "own0.test"
	e, c, key, pattern := own(t, name)
	ctx := context.Background()
	for j := range 3 {
		on(t, e, j, "ZADD", "{"+key+"}:r", 1, "old-reader")
	}
	before := e.direct.stableStates(ctx, pattern)
	since := time.Now()
	on(t, e, 0, "SET", "{"+key+"}:wq", "writer", "PX", 60000)     // left on master 0
	on(t, e, 1, "ZADD", "{"+key+"}:r", 1, "new-reader")           // left on master 1
	on(t, e, 2, "SET", "{"+key+"}:wq", "writer", "PX", 60000)     // excused: a release to master 2 failed
	on(t, e, 0, "SET", "{"+key+"}:tomb:a", "1", "PX", 60000)      // a tombstone with a TTL
	on(t, e, 1, "SET", "{"+key+"}:tomb:b", "1")                   // one without: left
	on(t, e, 0, "SET", "{"+key+"}:fence", "7")                    // counters outlive their locks
	on(t, e, 0, "SET", "{"+key+"}:fair:ticket", "3", "PX", 60000) //
	c.obs.NodeError(redlock.NodeErrorEvent{Op: opRelease, Addr: c.nodes[2].Addr()})
	c.restored(ctx, name, pattern, before, "a test call", since, time.Time{}, false)
	rs := of(e, checker.Remained)
	if len(rs) != 2 {
		t.Fatalf("remained %v, want masters 0 and 1", rs)
	}
	for i, want := range []string{"master 0 still holds string {" + key + "}:wq", "master 1 still holds"} {
		if !strings.Contains(rs[i].Detail, want) {
			t.Errorf("remained %q, want %q", rs[i].Detail, want)
		}
	}
	if !strings.Contains(rs[1].Detail, "new-reader") || !strings.Contains(rs[1].Detail, "tombstone {"+key+"}:tomb:b without a TTL") {
		t.Errorf("master 1: %q, want the new reader and the tombstone without a TTL", rs[1].Detail)
	}
	// Once the leftovers are gone, nothing remains.
	for j := range 3 {
		on(t, e, j, "DEL", "{"+key+"}:wq", "{"+key+"}:tomb:b")
	}
	on(t, e, 1, "ZREM", "{"+key+"}:r", "new-reader")
	c.restored(ctx, name, pattern, before, "a test call", time.Now(), time.Time{}, false)
	if rs := of(e, checker.Remained); len(rs) != 2 {
		t.Errorf("remained %v after the leftovers went", rs[2:])
	}
}

// A lock key left on a minority of the masters is a leftover of every
// master to which no release failed; a reentrant hold's is excused where
// its acquire failed too.
func TestRemainsExcusesFailedReleases(t *testing.T) {
	e := env(t)
	c := e.clients[0]
	ctx := context.Background()
	key := e.Key("k")
	since := time.Now()
	on(t, e, 0, "SET", key, "token", "PX", 60000)
	on(t, e, 1, "SET", key, "token", "PX", 60000)
	c.obs.NodeError(redlock.NodeErrorEvent{Op: opUnlock, Addr: c.nodes[1].Addr()})
	c.obs.NodeError(redlock.NodeErrorEvent{Op: opLock, Addr: c.nodes[0].Addr()})
	c.remains(ctx, "k", target{mode: modeString, key: key, member: "token"}, "an unlock", since, time.Now())
	rs := of(e, checker.Remained)
	if len(rs) != 1 || !strings.Contains(rs[0].Detail, "masters [0]") {
		t.Fatalf("remained %v, want master 0 only (an acquire failure excuses no plain lock)", rs)
	}
	hkey := e.Key("r")
	on(t, e, 0, "HSET", hkey, "owner", "o", "h:1", "1")
	c.remains(ctx, "r", target{mode: modeHash, key: hkey, member: "o"}, "a reentrant unlock", since, time.Now())
	if rs := of(e, checker.Remained); len(rs) != 1 {
		t.Errorf("remained %v: a reentrant hold is excused where its acquire failed", rs[1:])
	}
	// Errors before since excuse nothing.
	c.remains(ctx, "k", target{mode: modeString, key: key, member: "token"}, "a later unlock", time.Now(), time.Now())
	if rs := of(e, checker.Remained); len(rs) != 2 || !strings.Contains(rs[1].Detail, "masters [0 1]") {
		t.Errorf("remained %v, want masters 0 and 1", rs)
	}
}

// A fair call that waits behind a holder is seen registered, under the
// id the masters know it by; a crashed waiter's Locker sends nothing
// more, and its registration outlives it by its lifetime only.
func TestFairWaiterRegistersAndCrashes(t *testing.T) {
	e := env(t)
	a, b := e.clients[0], e.clients[1]
	ctx := context.Background()
	name := "fair-k0"
	holder := a.fairHold(ctx, ctx, name, true, probeTTL)
	if holder.err != nil {
		t.Fatal(holder.err)
	}
	l, obs, crash, err := b.crashable()
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	registered := len(of(e, checker.Registered)) // the holder's, if it was seen
	got := make(chan fairResult, 1)
	placed := make(chan struct{})
	go func() {
		got <- b.fairWith(wctx, ctx, l, name, false, time.Second, fairHooks{placed: func() { close(placed) }})
	}()
	<-placed
	if n := len(of(e, checker.Registered)); n != registered+1 {
		t.Fatalf("%d registrations recorded, want %d", n, registered+1)
	}
	crash()
	crashed := time.Now()
	cancel()
	r := <-got
	if r.err == nil || r.waiter == "" {
		t.Fatalf("the crashed waiter: %v, waiter %q", r.err, r.waiter)
	}
	live := 0
	for _, rd := range e.direct.readTarget(ctx, target{mode: modeFair, key: e.Key(name), member: r.waiter}) {
		if rd.known && rd.held {
			live++
		}
	}
	if live != 3 {
		t.Errorf("the crashed waiter is registered on %d masters, want 3: its withdrawal must not have been sent", live)
	}
	if _, err := l.TryLock(ctx, e.Key("other"), time.Second); err == nil {
		t.Error("a crashed Locker was granted a lock")
	}
	b.crashedRegistration(ctx, name, r, crashed, obs)
	if rs := of(e, checker.Remained); len(rs) != 0 {
		t.Errorf("the registration of the crashed waiter outlived its lifetime: %v", rs)
	}
	a.registrationGone(ctx, name, holder, "unlock")
	if err := holder.h.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A live reader beside a writer on a master is recorded.
func TestBesideWriter(t *testing.T) {
	e := env(t)
	c := e.clients[0]
	key := e.Key("rw-k0")
	on(t, e, 1, "SET", "{"+key+"}:w", "writer", "PX", 60000)
	on(t, e, 1, "ZADD", "{"+key+"}:r", 1, "expired-reader") // expired long ago: no reader
	on(t, e, 2, "ZADD", "{"+key+"}:r", 1e15, "reader")      // no writer here
	c.besideWriter(context.Background(), "rw-k0")
	if cs := of(e, checker.Coexisted); len(cs) != 0 {
		t.Fatalf("coexisted %v with no live reader beside a writer", cs)
	}
	on(t, e, 1, "ZADD", "{"+key+"}:r", 1e15, "reader")
	c.besideWriter(context.Background(), "rw-k0")
	if cs := of(e, checker.Coexisted); len(cs) != 1 || !strings.Contains(cs[0].Detail, "master 1 holds 1 live readers") {
		t.Fatalf("coexisted %v, want master 1", cs)
	}
}

// A waiter counts as the call's own only when it is new and on a quorum,
// and the only one so.
func TestNewOnQuorum(t *testing.T) {
	known := map[string]bool{"old": true}
	ws := []map[string]bool{{"old": true, "new": true}, {"new": true}, nil, {"new": true, "late": true}, {"late": true}}
	if got := newOnQuorum(ws, known, 3); got != "new" {
		t.Errorf("newOnQuorum = %q, want new", got)
	}
	ws[2] = map[string]bool{"late": true}
	if got := newOnQuorum(ws, known, 3); got != "" {
		t.Errorf("newOnQuorum = %q with two new waiters on a quorum, want none", got)
	}
	if got := newOnQuorum(ws, map[string]bool{"old": true, "new": true, "late": true}, 3); got != "" {
		t.Errorf("newOnQuorum = %q with every waiter known, want none", got)
	}
}

// added reports new keys, new members, changed values of strings and
// hashes, and tombstones without a TTL; not scores, counters, or what
// went away.
func TestAdded(t *testing.T) {
	ki := func(typ string, pttl int64, kv ...string) keyItems {
		k := keyItems{typ: typ, pttl: pttl, items: map[string]string{}}
		for i := 0; i+1 < len(kv); i += 2 {
			k.items[kv[i]] = kv[i+1]
		}
		return k
	}
	before := keyState{
		"k":       ki("string", 100, "", "a"),
		"{k}:r":   ki("zset", 100, "r1", ""),
		"{k}:h":   ki("hash", 100, "owner", "o", "h:1", "1"),
		"{k}:old": ki("string", 100, "", "x"),
	}
	now := keyState{
		"k":               ki("string", 50, "", "a"),
		"{k}:r":           ki("zset", 50, "r1", "", "r2", ""),
		"{k}:h":           ki("hash", 50, "owner", "p", "h:1", "1"),
		"{k}:wq":          ki("string", 50, "", "w"),
		"{k}:fence":       ki("string", -1, "", "9"),
		"{k}:fair:ticket": ki("string", 50, "", "3"),
		"{k}:tomb:a":      ki("string", 50, "", "1"),
		"{k}:tomb:b":      ki("string", -1, "", "1"),
	}
	var got []string
	for _, c := range added(before, now) {
		got = append(got, c.text)
	}
	want := []string{`field "owner" = "p" of hash {k}:h (was "o")`, `member "r2" of zset {k}:r`, "tombstone {k}:tomb:b without a TTL", `string {k}:wq map[:w]`}
	if len(got) != len(want) {
		t.Fatalf("added = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("added[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	if a := added(now, before); len(a) != 2 || a[1].text != `string {k}:old map[:x]` {
		t.Errorf("added(now, before) = %+v, want the owner's change and {k}:old", a)
	}
}

// A leftover that a master keeps until it expires is one, even when it
// is gone by the end of the check; one that a slow release removes before
// it would expire is not.
func TestRestoredTellsExpiryFromRemoval(t *testing.T) {
	name := "own0.expiry"
	e, c, key, pattern := own(t, name)
	ctx := context.Background()
	before := e.direct.stableStates(ctx, pattern)
	since := time.Now()
	on(t, e, 0, "SET", key+"-left", "1", "PX", 300)
	on(t, e, 1, "SET", key+"-removed", "1", "PX", 5000)
	removed := make(chan struct{})
	time.AfterFunc(50*time.Millisecond, func() {
		defer close(removed)
		e.direct.do(ctx, "DEL", key+"-removed")
	})
	c.restored(ctx, name, pattern, before, "a test call", since, time.Time{}, false)
	<-removed
	rs := of(e, checker.Remained)
	if len(rs) != 1 || !strings.Contains(rs[0].Detail, "master 0 kept "+key+"-left until it expired") {
		t.Fatalf("remained %v, want master 0's key, kept until it expired", rs)
	}
}

// The masters whose state differs from most of the others' lag; a master
// that did not answer does not.
func TestLagging(t *testing.T) {
	a := keyState{"k": {typ: "string", items: map[string]string{"": "t"}}}
	b := keyState{}
	if got := lagging([]keyState{a, a, nil, b, a}); len(got) != 1 || got[0] != 3 {
		t.Errorf("lagging = %v, want [3]", got)
	}
	if got := lagging([]keyState{a, a, nil}); got != nil {
		t.Errorf("lagging = %v with the same state everywhere, want none", got)
	}
	if got := lagging([]keyState{nil, nil}); got != nil {
		t.Errorf("lagging = %v with no answer, want none", got)
	}
}

// Something gone at its expiry expired, unless it was first seen too
// close to its expiry to tell; something gone before it was removed.
func TestLifespan(t *testing.T) {
	t0 := time.Now()
	ms := time.Millisecond
	for _, c := range []struct {
		name      string
		seen, exp time.Duration
		never     bool
		gone      time.Duration
		want      bool
	}{
		{"gone at its expiry", 0, 400 * ms, false, 400 * ms, true},
		{"gone a little before its expiry", 0, 400 * ms, false, 390 * ms, true},
		{"removed well before", 0, 400 * ms, false, 300 * ms, false},
		{"seen too close to its expiry", 200 * ms, 400 * ms, false, 400 * ms, false},
		{"no TTL", 0, 400 * ms, true, 400 * ms, false},
	} {
		l := &lifespan{seen: t0.Add(c.seen)}
		l.note(t0.Add(c.exp), c.never)
		if got := l.expiredBy(t0.Add(c.gone)); got != c.want {
			t.Errorf("%s: expiredBy = %t, want %t", c.name, got, c.want)
		}
	}
}
