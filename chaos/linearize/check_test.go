package linearize_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/linearize"
)

const (
	ok      = linearize.Ok
	refused = linearize.Refused
	unknown = linearize.Unknown
)

func TestCheckHandMade(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ops     []linearize.Op
		illegal []string // keys
	}{
		{"empty", nil, nil},
		{"sequential", []linearize.Op{
			grant(1, "k", 0, 5*ms, 100*ms), release(1, 10*ms, 12*ms, ok),
			grant(2, "k", 8*ms, 20*ms, 120*ms), release(2, 30*ms, 31*ms, ok),
		}, nil},
		{"overlap", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms), release(1, 50*ms, 51*ms, ok),
			grant(2, "k", 30*ms, 40*ms, 140*ms), release(2, 60*ms, 61*ms, ok),
		}, []string{"k"}},
		{"touching at release", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms), release(1, 50*ms, 55*ms, ok),
			grant(2, "k", 10*ms, 50*ms, 150*ms),
		}, nil},
		{"touching at until", []linearize.Op{
			grant(1, "k", 0, 0, 50*ms),
			grant(2, "k", 0, 50*ms, 150*ms),
		}, nil},
		{"one nanosecond of overlap", []linearize.Op{
			grant(1, "k", 0, 0, 50*ms),
			grant(2, "k", 0, 50*ms-1, 150*ms),
		}, []string{"k"}},
		{"until bounds a late release", []linearize.Op{
			grant(1, "k", 0, 0, 50*ms), release(1, 500*ms, 501*ms, refused), // paused past Until
			grant(2, "k", 0, 60*ms, 150*ms), release(2, 70*ms, 71*ms, ok),
		}, nil},
		{"grant after expiry, release of the expired lock later", []linearize.Op{
			grant(1, "k", 0, 0, 50*ms),
			grant(2, "k", 20*ms, 50*ms, 150*ms), release(2, 60*ms, 61*ms, ok),
			release(1, 55*ms, 56*ms, refused),
		}, nil},
		{"nesting", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms),
			grant(2, "k", 0, 10*ms, 20*ms),
		}, []string{"k"}},
		{"same start", []linearize.Op{
			grant(1, "k", 0, 10*ms, 20*ms),
			grant(2, "k", 0, 10*ms, 20*ms),
		}, []string{"k"}},
		{"zero-length hold overlaps nothing", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms),
			grant(2, "k", 0, 10*ms, 10*ms),
		}, nil},
		{"release recorded before its grant holds nothing", []linearize.Op{
			release(1, 10*ms, 11*ms, ok), grant(2, "k", 0, 20*ms, 100*ms), grant(1, "k", 0, 30*ms, 100*ms),
		}, nil},
		{"first of two releases counts", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms), release(1, 80*ms, 81*ms, ok), release(1, 10*ms, 11*ms, unknown),
			grant(2, "k", 0, 20*ms, 100*ms),
		}, nil},
		{"a release that timed out still ends the belief", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms), release(1, 10*ms, 90*ms, unknown),
			grant(2, "k", 0, 20*ms, 100*ms),
		}, nil},
		{"records out of order", []linearize.Op{
			release(2, 60*ms, 61*ms, ok), grant(2, "k", 0, 40*ms, 140*ms),
			release(1, 50*ms, 51*ms, ok), grant(1, "k", 0, 0, 100*ms),
		}, []string{"k"}},
		{"only the key with the overlap", []linearize.Op{
			grant(1, "a", 0, 0, 100*ms), grant(2, "b", 0, 0, 100*ms),
			grant(3, "b", 0, 50*ms, 100*ms), grant(4, "c", 0, 200*ms, 300*ms),
		}, []string{"b"}},
		{"possibly applied acquires do not act", []linearize.Op{
			attempt(7, "k", 0, 40*ms, unknown),
			grant(1, "k", 0, 10*ms, 100*ms), release(1, 30*ms, 31*ms, ok),
			attempt(8, "k", 15*ms, 60*ms, unknown),
			grant(2, "k", 35*ms, 50*ms, 100*ms),
			attempt(9, "k", 55*ms, 80*ms, refused),
		}, nil},
		{"a refusal while free is no violation", []linearize.Op{
			attempt(7, "k", 0, 5*ms, refused), grant(1, "k", 6*ms, 10*ms, 100*ms),
		}, nil},
		{"possibly applied acquires hide no overlap", []linearize.Op{
			attempt(7, "k", 0, 90*ms, unknown),
			grant(1, "k", 0, 10*ms, 100*ms),
			attempt(8, "k", 0, 90*ms, unknown),
			grant(2, "k", 0, 20*ms, 100*ms),
		}, []string{"k"}},
		{"readers share", []linearize.Op{
			reader(1, "k", 0, 100*ms), reader(2, "k", 10*ms, 100*ms), reader(3, "k", 20*ms, 50*ms),
		}, nil},
		{"writer beside a reader", []linearize.Op{
			reader(1, "k", 0, 100*ms), release(1, 40*ms, 41*ms, ok),
			grant(2, "k", 0, 30*ms, 100*ms),
		}, []string{"k"}},
		{"writer after the last reader", []linearize.Op{
			reader(1, "k", 0, 100*ms), release(1, 40*ms, 41*ms, ok),
			reader(2, "k", 10*ms, 45*ms),
			grant(3, "k", 0, 45*ms, 100*ms), release(3, 60*ms, 61*ms, ok),
			reader(4, "k", 60*ms, 100*ms),
		}, nil},
		{"reader beside a writer", []linearize.Op{
			grant(1, "k", 0, 0, 100*ms), reader(2, "k", 99*ms, 200*ms),
		}, []string{"k"}},
		{"one owner nests", []linearize.Op{
			owned(1, "A", "k", 0, 100*ms), owned(2, "A", "k", 10*ms, 30*ms), owned(3, "A", "k", 20*ms, 200*ms),
			release(2, 25*ms, 26*ms, ok), release(1, 90*ms, 91*ms, ok), release(3, 150*ms, 151*ms, ok),
			owned(4, "B", "k", 150*ms, 300*ms),
		}, nil},
		{"another owner while the outer hold is valid", []linearize.Op{
			owned(1, "A", "k", 0, 5000*ms), owned(2, "A", "k", 10*ms, 300*ms), // inner hold, shorter
			release(2, 310*ms, 311*ms, refused),
			owned(3, "B", "k", 400*ms, 900*ms), // defect 5: the inner hold cut the outer one short
		}, []string{"k"}},
		{"an owner and a plain hold", []linearize.Op{
			owned(1, "A", "k", 0, 100*ms), grant(2, "k", 0, 50*ms, 60*ms),
		}, []string{"k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			modes(t, func(t *testing.T, opt linearize.Options) {
				r, err := linearize.Check(tc.ops, opt)
				if err != nil {
					t.Fatal(err)
				}
				if got := r.IllegalKeys(); !slices.Equal(got, tc.illegal) {
					t.Errorf("illegal keys = %v, want %v", got, tc.illegal)
				}
				want := linearize.Linearizable
				if len(tc.illegal) > 0 {
					want = linearize.Illegal
				}
				if r.Verdict != want {
					t.Errorf("verdict = %v, want %v", r.Verdict, want)
				}
				for _, k := range r.Keys {
					if k.Verdict == linearize.TimedOut {
						t.Errorf("key %q timed out", k.Key)
					}
				}
			})
		})
	}
}

func TestCheckCounts(t *testing.T) {
	r, err := linearize.Check([]linearize.Op{
		grant(1, "k", 0, 0, 100*ms), release(1, 10*ms, 11*ms, ok), release(1, 20*ms, 21*ms, ok),
		grant(2, "k", 0, 30*ms, 30*ms), // zero length
		attempt(3, "k", 0, 5*ms, unknown),
		release(9, 5*ms, 6*ms, ok), // no acquire
		grant(4, "j", 0, 0, 10*ms),
	}, linearize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []linearize.KeyResult{
		{Key: "j", Verdict: linearize.Linearizable, Ops: 2, Holds: 1},
		{Key: "k", Verdict: linearize.Linearizable, Ops: 5, Holds: 1},
	}
	if !slices.Equal(r.Keys, want) {
		t.Errorf("keys = %+v, want %+v", r.Keys, want)
	}
	if r.Unmatched != 1 {
		t.Errorf("unmatched = %d, want 1", r.Unmatched)
	}
}

func TestCheckRejectsMalformed(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []linearize.Op
		want string
	}{
		{"two grants, one id", []linearize.Op{grant(1, "k", 0, 0, ms), grant(1, "j", 0, 5*ms, 9*ms)}, "granted twice"},
		{"grant without id", []linearize.Op{grant(0, "k", 0, 0, ms)}, "without a lock id"},
		{"no kind", []linearize.Op{{Lock: 1, Outcome: ok}}, "invalid kind"},
		{"no outcome", []linearize.Op{{Kind: linearize.Acquire, Lock: 1}}, "invalid outcome"},
		{"bad mode", []linearize.Op{{Kind: linearize.Acquire, Lock: 1, Outcome: ok, Mode: 7}}, "invalid mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := linearize.Check(tc.ops, linearize.Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "linearize: ") {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// unknownStorm is an illegal history behind n possibly applied acquires
// whose open windows are all concurrent: with call windows, porcupine has
// 2^n orders of them to rule out, which no machine finishes.
func unknownStorm(n int) []linearize.Op {
	ops := []linearize.Op{grant(1, "k", 0, 10*ms, 100*ms), grant(2, "k", 0, 20*ms, 100*ms)}
	for i := range n {
		call := time.Duration(i) * time.Microsecond
		ops = append(ops, attempt(10+i, "k", call, call+5*ms, unknown))
	}
	return ops
}

func TestCheckTimesOut(t *testing.T) {
	ops := unknownStorm(60)
	r, err := linearize.Check(ops, linearize.Options{CallWindows: true, Timeout: 100 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != linearize.TimedOut || len(r.Keys) != 1 || r.Keys[0].Verdict != linearize.TimedOut {
		t.Errorf("result = %+v, want timed out", r)
	}
	// Points order the possibly applied acquires by their calls: decided.
	r, err = linearize.Check(ops, linearize.Options{Timeout: 100 * ms})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != linearize.Illegal {
		t.Errorf("verdict with points = %v, want illegal", r.Verdict)
	}
}

func TestCheckVisualizes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.html")
	r, err := linearize.Check([]linearize.Op{
		grant(1, "a", 0, 0, 100*ms),
		grant(2, "k", 0, 0, 100*ms), grant(3, "k", 0, 50*ms, 150*ms),
		grant(4, "z", 0, 0, 100*ms), grant(5, "z", 0, 50*ms, 150*ms),
	}, linearize.Options{Visualize: path})
	if err != nil {
		t.Fatal(err)
	}
	if r.Visualized != "k" || !slices.Equal(r.IllegalKeys(), []string{"k", "z"}) {
		t.Errorf("visualized %q, illegal keys %v; want k, [k z]", r.Visualized, r.IllegalKeys())
	}
	html, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "<html") || !strings.Contains(string(html), "hold begins: lock 3") {
		t.Errorf("visualization lacks the html or the operations (%d bytes)", len(html))
	}

	r, err = linearize.Check([]linearize.Op{grant(2, "k", 0, 0, 100*ms), grant(3, "k", 0, 50*ms, 150*ms)},
		linearize.Options{Visualize: filepath.Join(dir, "missing", "k.html")})
	if err == nil || !strings.HasPrefix(err.Error(), "linearize: visualize") {
		t.Errorf("err = %v, want a visualization error", err)
	}
	if r.Verdict != linearize.Illegal || r.Visualized != "" {
		t.Errorf("result = %+v, want illegal and nothing visualized", r)
	}
}

// A soak's history is long; one overlap deep inside it must still be found,
// and the rest must not cost a search over all of it.
func TestCheckLongHistory(t *testing.T) {
	var ops []linearize.Op
	for i := int64(1); i <= 5000; i++ {
		at := time.Duration(i) * 10 * ms
		ops = append(ops, grant(i, "k", at-3*ms, at, at+100*ms), release(i, at+5*ms, at+6*ms, ok),
			attempt(int(i%7), "k", at+ms, at+8*ms, unknown))
	}
	r, err := linearize.Check(ops, linearize.Options{})
	if err != nil || r.Verdict != linearize.Linearizable || r.Keys[0].Holds != 5000 {
		t.Fatalf("result %+v, %v; want linearizable with 5000 holds", r, err)
	}
	ops[3*4000+1].Call += 6 * ms // lock 4001 released 1ms after lock 4002 is granted
	r, err = linearize.Check(ops, linearize.Options{})
	if err != nil || r.Verdict != linearize.Illegal {
		t.Fatalf("result %+v, %v; want illegal", r, err)
	}
}
