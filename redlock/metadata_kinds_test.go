package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// recordKind is one exclusive lock kind taken WithMetadata: how to
// acquire it, where its record is, and whether Locker.Holder reads it by
// the lock's name.
type recordKind struct {
	name    string
	acquire func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error)
	record  func(lk *redlock.Lock) string // the record's name on the masters
	byName  bool                          // Locker.Holder(ctx, key) reads it
}

var recordKinds = []recordKind{
	{name: "lock", byName: true,
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.Lock(ctx, key, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(lk.Key()) }},
	{name: "reentrant", byName: true,
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.Reentrant(key, "owner-1").Lock(ctx, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(lk.Key()) }},
	{name: "writer", byName: true,
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.RWMutex(key).Lock(ctx, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(lk.Key()) }},
	{name: "fair", byName: true,
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.Fair(key).Lock(ctx, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(lk.Key()) }},
	{name: "multi", byName: true,
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.LockMulti(ctx, []string{key, key + "-2"}, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(lk.Keys()[0]) }},
	{name: "semaphore",
		acquire: func(ctx context.Context, l *redlock.Locker, key string, opts ...redlock.Option) (*redlock.Lock, error) {
			return l.Semaphore(key, 3).Acquire(ctx, 2*time.Second, opts...)
		},
		record: func(lk *redlock.Lock) string { return layout.Holder(layout.Permit(lk.Key(), lk.Permit())) }},
}

// Every exclusive kind, and each semaphore permit, keeps its holder record
// on every master that holds it, for as long as the lock: written with the
// grant, moved by Extend, replaced by SetMetadata, read by Holder from a
// quorum, gone with the Unlock (Holder then says ErrNotHeld), and nothing
// else left behind; plain and fenced alike.
func TestMetadataEveryKind(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	md := map[string]string{"host": "web-3", "request": "r-42"}
	for _, k := range recordKinds {
		for _, fencing := range []bool{false, true} {
			key := "md-" + k.name
			if fencing {
				key += "-fenced"
			}
			t.Run(key, func(t *testing.T) {
				ctx := t.Context()
				lk, err := k.acquire(ctx, l, key, redlock.WithMetadata(md), redlock.WithFencing(fencing))
				if err != nil {
					t.Fatal(err)
				}
				if got := lk.Metadata(); !maps.Equal(got, md) {
					t.Fatalf("Metadata() = %v, want %v", got, md)
				}
				rec := k.record(lk)
				if got := records(t, nodes, rec); !slices.Equal(got, repeat(lk.Token()+" "+"host=web-3 request=r-42", 3)) {
					t.Fatalf("records %s = %q", rec, got)
				}
				if k.byName {
					h, err := l.Holder(ctx, key)
					if err != nil {
						t.Fatal(err)
					}
					if h.Token != lk.Token() || !maps.Equal(h.Metadata, md) || h.Masters != 3 || h.TTL <= 0 || h.TTL > 2*time.Second {
						t.Fatalf("Holder = %+v, want token %s, %v on 3 masters", h, lk.Token(), md)
					}
				}
				if err := lk.Extend(ctx, 30*time.Second); err != nil {
					t.Fatal(err)
				}
				for i, ms := range pttls(t, nodes, rec) {
					if ms < 10_000 {
						t.Fatalf("record's TTL after Extend(30s) is %d ms on master %d: not extended with the lock", ms, i)
					}
				}
				if err := lk.SetMetadata(ctx, map[string]string{"step": "2"}); err != nil {
					t.Fatal(err)
				}
				await(t, "the new record on every master", func() bool {
					return slices.Equal(records(t, nodes, rec), repeat(lk.Token()+" step=2", 3))
				})
				if ms := pttls(t, nodes, rec); ms[0] < 10_000 {
					t.Fatalf("record's TTL after SetMetadata is %d ms: not the lock's", ms[0])
				}
				if err := lk.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				awaitOnly(t, nodes, key)
				if _, err := l.Holder(ctx, key); k.byName && !errors.Is(err, redlock.ErrNotHeld) {
					t.Fatalf("Holder after Unlock: %v, want ErrNotHeld", err)
				}
			})
		}
	}
}

// records reads the holder record rec on every master, as "token
// field=value ..." in field order ("" when absent).
func records(t *testing.T, nodes []*pool.Node, rec string) []string {
	t.Helper()
	out := make([]string, len(nodes))
	for i, n := range nodes {
		m, err := redis.StringMap(n.Do(context.Background(), "HGETALL", rec))
		if err != nil {
			t.Fatalf("HGETALL %s on %s: %v", rec, n.Addr(), err)
		}
		if len(m) == 0 {
			continue
		}
		var fields []string
		for _, f := range slices.Sorted(maps.Keys(m)) {
			if f != "token" {
				fields = append(fields, f+"="+m[f])
			}
		}
		out[i] = m["token"] + " " + strings.Join(fields, " ")
	}
	return out
}

// awaitOnly awaits every master to keep, of the keys whose names contain
// infix, only tombstones, fencing counters and a fair lock's ticket
// counter: no lock, record, reader or waiter is left behind.
func awaitOnly(t *testing.T, nodes []*pool.Node, infix string) {
	t.Helper()
	var left []string
	await(t, "nothing but tombstones and counters left", func() bool {
		left = left[:0]
		for _, n := range nodes {
			keys, err := redis.Strings(n.Do(context.Background(), "KEYS", "*"))
			if err != nil {
				t.Fatalf("KEYS on %s: %v", n.Addr(), err)
			}
			for _, k := range keys {
				if strings.Contains(k, infix) && !layout.IsTomb(k) && !strings.HasSuffix(k, ":fence") && !strings.HasSuffix(k, ":fair:ticket") {
					left = append(left, k)
				}
			}
		}
		return len(left) == 0
	})
}

// A reentrant lock's record is its owner's: a nested hold without
// metadata keeps it in step with the hash (its Extend moves it), the
// first hold's Unlock leaves it while another hold remains, and the last
// Unlock deletes it.
func TestReentrantRecordIsTheOwners(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	r := l.Reentrant("md-nested", "job-7")
	first, err := r.Lock(ctx, 2*time.Second, redlock.WithMetadata(map[string]string{"host": "a"}))
	if err != nil {
		t.Fatal(err)
	}
	nested, err := r.Lock(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if nested.Metadata() != nil {
		t.Fatalf("a hold without metadata: Metadata() = %v, want nil", nested.Metadata())
	}
	if err := nested.Extend(ctx, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	rec := layout.Holder("md-nested")
	for i, ms := range pttls(t, nodes, rec) {
		if ms < 10_000 {
			t.Fatalf("record's TTL after the nested hold's Extend(30s) is %d ms on master %d", ms, i)
		}
	}
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	h, err := l.Holder(ctx, "md-nested")
	if err != nil || h.Token != "job-7" || h.Metadata["host"] != "a" {
		t.Fatalf("Holder with the nested hold left = %+v, %v; want owner job-7, host a", h, err)
	}
	if err := nested.SetMetadata(ctx, map[string]string{"host": "b"}); err != nil {
		t.Fatal(err)
	}
	if h, err := l.Holder(ctx, "md-nested"); err != nil || h.Metadata["host"] != "b" {
		t.Fatalf("Holder after the nested hold's SetMetadata = %+v, %v", h, err)
	}
	if err := nested.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	awaitOnly(t, nodes, "md-nested")
}

// A multi-key lock's record is its first key's, and not one of its Keys
// (nor may one of them be the record); a read hold is shared and keeps
// none: both refused with nothing sent.
func TestMetadataMultiAndReaders(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	ctx := t.Context()
	if _, err := l.RWMutex("rw").RLock(ctx, time.Second, redlock.WithMetadata(nil)); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("RLock WithMetadata: %v, want ErrInvalid", err)
	}
	if _, err := l.LockMulti(ctx, []string{"m", "{m}:holder"}, time.Second, redlock.WithMetadata(nil)); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("LockMulti WithMetadata of a key and its record's name: %v, want ErrInvalid", err)
	}
	for _, s := range sp {
		if n := s.calls.Load(); n != 0 {
			t.Fatalf("%s got %d calls for a read hold WithMetadata", s.Addr(), n)
		}
	}
	lk, err := l.TryLockMulti(ctx, []string{"{m}a", "{m}b"}, time.Second, redlock.WithMetadata(map[string]string{"x": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := lk.Keys(); !slices.Equal(got, []string{"{m}a", "{m}b"}) {
		t.Fatalf("Keys() = %q", got)
	}
	if h, err := l.Holder(ctx, "{m}b"); err != nil || h.Token != lk.Token() || h.Metadata != nil {
		t.Fatalf("Holder of the second key = %+v, %v; want the token, no record", h, err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	awaitOnly(t, nodes, "{m}")
}

// A Resume carries the holder record with the lock: kept (the giver's
// fields) without WithMetadata, replaced with it; moved by the resumed
// lock's Extend, and deleted by its Unlock. Plain and fenced.
func TestResumeCarriesTheRecord(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	for _, fencing := range []bool{false, true} {
		for _, replace := range []bool{false, true} {
			key := fmt.Sprintf("md-resume-%t-%t", fencing, replace)
			t.Run(key, func(t *testing.T) {
				ctx := t.Context()
				giver, err := l.Lock(ctx, key, 2*time.Second, redlock.WithMetadata(map[string]string{"host": "giver"}), redlock.WithFencing(fencing))
				if err != nil {
					t.Fatal(err)
				}
				opts := []redlock.Option{redlock.WithFencing(fencing)}
				want := "giver"
				if replace {
					opts = append(opts, redlock.WithMetadata(map[string]string{"host": "taker"}))
					want = "taker"
				}
				taker, err := l.Resume(ctx, key, giver.Token(), 30*time.Second, opts...)
				if err != nil {
					t.Fatal(err)
				}
				if got := taker.Metadata()["host"]; replace != (got == "taker") {
					t.Fatalf("Metadata() of the taker: host %q", got)
				}
				rec := layout.Holder(key)
				await(t, "the record moved with the resumed lock", func() bool {
					return slices.Equal(records(t, nodes, rec), repeat(giver.Token()+" host="+want, 3)) && slices.Min(pttls(t, nodes, rec)) > 10_000
				})
				if h, err := l.Holder(ctx, key); err != nil || h.Metadata["host"] != want {
					t.Fatalf("Holder after Resume = %+v, %v; want host %s", h, err, want)
				}
				if err := taker.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				awaitOnly(t, nodes, key)
			})
		}
	}
}
