package linearize_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/linearize"
)

// kind is the lock kind a random history is made of.
type kind int

const (
	plain kind = iota
	readWrite
	reentrant
)

func (k kind) String() string { return [...]string{"plain", "read-write", "reentrant"}[k] }

// randomHistory makes a history of up to 30 acquisitions on three keys, in
// random order, with coarse times so that ties and touching holds are
// common: granted acquires with waits before the grant, zero to two
// releases each (some begun before the grant, some after Until, some timed
// out), refused and possibly applied acquires, and releases of no
// acquisition.
func randomHistory(rng *rand.Rand, k kind) []linearize.Op {
	d := func(n int) time.Duration { return time.Duration(rng.IntN(n)) * ms }
	key := func() string { return string(rune('a' + rng.IntN(3))) }
	outcome := func() linearize.Outcome { return []linearize.Outcome{ok, ok, refused, unknown}[rng.IntN(4)] }
	var ops []linearize.Op
	n := rng.IntN(30)
	for id := int64(1); id <= int64(n); id++ {
		at := d(90)
		g := grant(id, key(), max(0, at-d(20)), at, at+d(20))
		switch k {
		case readWrite:
			g.Mode = linearize.Mode(rng.IntN(2))
		case reentrant:
			g.Owner = string(rune('A' + rng.IntN(3)))
		}
		ops = append(ops, g)
		for range rng.IntN(3) {
			call := at - 5*ms + d(30)
			ops = append(ops, release(id, call, call+d(5), outcome()))
		}
	}
	for range rng.IntN(6) {
		call := d(60)
		ops = append(ops, attempt(100+rng.IntN(10), key(), call, call+d(20), []linearize.Outcome{refused, unknown}[rng.IntN(2)]))
	}
	for i := range rng.IntN(2) {
		r := release(int64(1000+i), d(60), d(60)+d(5), ok)
		r.Key = key()
		ops = append(ops, r)
	}
	rng.Shuffle(len(ops), func(i, j int) { ops[i], ops[j] = ops[j], ops[i] })
	return ops
}

// toEvents converts a history for package checker.
func toEvents(ops []linearize.Op) []checker.Event {
	var evs []checker.Event
	for _, o := range ops {
		switch {
		case o.Kind == linearize.Acquire && o.Outcome == linearize.Ok:
			evs = append(evs, checker.Event{Kind: checker.Granted, Lock: o.Lock, Client: o.Client, Key: o.Key,
				Token: o.Token, At: o.Return, Until: o.Until})
		case o.Kind == linearize.Release:
			evs = append(evs, checker.Event{Kind: checker.Released, Lock: o.Lock, At: o.Call})
		}
	}
	return evs
}

// referenceIllegal is the brute-force reference for every kind: the keys on
// which two incompatible holds overlap, comparing every pair.
func referenceIllegal(ops []linearize.Op) []string {
	type hold struct {
		key, owner string
		shared     bool
		start, end time.Duration
	}
	holds := map[int64]*hold{}
	for _, o := range ops {
		if o.Kind == linearize.Acquire && o.Outcome == linearize.Ok {
			holds[o.Lock] = &hold{o.Key, o.Owner, o.Mode == linearize.Shared, o.Return, o.Until}
		}
	}
	for _, o := range ops {
		if h := holds[o.Lock]; o.Kind == linearize.Release && h != nil {
			h.end = min(h.end, o.Call)
		}
	}
	var keys []string
	for a, x := range holds {
		for b, y := range holds {
			compatible := (x.shared && y.shared) || (x.owner != "" && x.owner == y.owner)
			if a < b && x.key == y.key && !compatible && max(x.start, y.start) < min(x.end, y.end) {
				keys = append(keys, x.key)
			}
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// checkerIllegal is the keys package checker finds an overlap on.
func checkerIllegal(ops []linearize.Op) []string {
	var keys []string
	for _, o := range checker.Check(toEvents(ops)).Overlaps {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func TestAgreesOnRandomHistories(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	for _, k := range []kind{plain, readWrite, reentrant} {
		t.Run(k.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(k)))
			rounds, illegal := 3000, 0
			if k != plain {
				rounds = 1000
			}
			for round := range rounds {
				ops := randomHistory(rng, k)
				want := referenceIllegal(ops)
				if k == plain {
					if c := checkerIllegal(ops); !slices.Equal(c, want) {
						t.Fatalf("seed %d round %d: checker %v, reference %v (the reference is wrong?)\n%s", seed, round, c, want, dump(ops))
					}
				}
				if len(want) > 0 {
					illegal++
				}
				for _, windows := range []bool{false, true} {
					r, err := linearize.Check(ops, linearize.Options{CallWindows: windows})
					if err != nil {
						t.Fatalf("seed %d round %d: %v", seed, round, err)
					}
					if got := r.IllegalKeys(); !slices.Equal(got, want) || r.Verdict == linearize.TimedOut {
						t.Fatalf("seed %d round %d, call windows %t: porcupine %v (%v), checker %v\n%s",
							seed, round, windows, got, r.Verdict, want, dump(ops))
					}
				}
			}
			// Both verdicts must be common, or the comparison shows little.
			if illegal < rounds/10 || illegal > rounds*9/10 {
				t.Errorf("%d of %d histories illegal: the generator is unbalanced", illegal, rounds)
			}
			t.Logf("%d histories, %d illegal", rounds, illegal)
		})
	}
}

func dump(ops []linearize.Op) string {
	s := ""
	for _, o := range ops {
		s += fmt.Sprintf("  %v until %v\n", o, o.Until)
	}
	return s
}
