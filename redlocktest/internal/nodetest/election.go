package nodetest

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// checkMetadata: a lock of every exclusive kind taken WithMetadata is
// read back, with its record, by Locker.Holder from a quorum, through
// another Locker (as another process would); SetMetadata replaces it; the
// record is gone with the lock. A semaphore's permit keeps and replaces
// its own record.
func checkMetadata(t *testing.T, newLocker func() *redlock.Locker) {
	holder, reader := newLocker(), newLocker()
	md := map[string]string{"host": "web-3", "pid": "4242"}
	fenced := redlock.WithFencing(true)
	kinds := []struct {
		name    string
		acquire func(k string, opt redlock.Option) (*redlock.Lock, error)
		byName  bool // Holder reads it by the lock's name
	}{
		{"lock", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.Lock(ctx(t), k, kindTTL, opt, fenced)
		}, true},
		{"reentrant", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.Reentrant(k, "owner").Lock(ctx(t), kindTTL, opt, fenced)
		}, true},
		{"writer", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.RWMutex(k).Lock(ctx(t), kindTTL, opt, fenced)
		}, true},
		{"fair", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.Fair(k).Lock(ctx(t), kindTTL, opt, fenced)
		}, true},
		{"multi", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.LockMulti(ctx(t), []string{k, k + "-b"}, kindTTL, opt)
		}, true},
		{"semaphore", func(k string, opt redlock.Option) (*redlock.Lock, error) {
			return holder.Semaphore(k, 2).Acquire(ctx(t), kindTTL, opt, fenced)
		}, false},
	}
	for _, kind := range kinds {
		k := key(t) + "-" + kind.name
		lk, err := kind.acquire(k, redlock.WithMetadata(md))
		if err != nil {
			t.Fatalf("%s WithMetadata: %v", kind.name, err)
		}
		if !maps.Equal(lk.Metadata(), md) {
			t.Fatalf("%s: Metadata() = %v, want %v", kind.name, lk.Metadata(), md)
		}
		if kind.byName {
			h, err := reader.Holder(ctx(t), k)
			if err != nil {
				t.Fatalf("%s: Holder: %v", kind.name, err)
			}
			if h.Token != lk.Token() || !maps.Equal(h.Metadata, md) || h.Masters < reader.Quorum() {
				t.Fatalf("%s: Holder = %+v, want token %s with %v on a quorum", kind.name, h, lk.Token(), md)
			}
		}
		if err := lk.SetMetadata(ctx(t), map[string]string{"host": "web-4"}); err != nil {
			t.Fatalf("%s: SetMetadata: %v", kind.name, err)
		}
		if kind.byName {
			if h, err := reader.Holder(ctx(t), k); err != nil || h.Metadata["host"] != "web-4" || len(h.Metadata) != 1 {
				t.Fatalf("%s: Holder after SetMetadata = %+v, %v", kind.name, h, err)
			}
		}
		unlock(t, kind.name+" with metadata", lk)
		if kind.byName {
			eventually(t, kind.name+": no master holds a holder after Unlock", func() bool {
				_, err := reader.Holder(ctx(t), k)
				return errors.Is(err, redlock.ErrNotHeld)
			})
		}
	}
}

// checkElection: two candidates in Lockers of their own, and an observer
// in a third; the second takes over when the first resigns, in a greater
// term, and the observer sees both leaders, and a proclaimed value, in
// term order.
func checkElection(t *testing.T, newLocker func() *redlock.Locker) {
	name := key(t)
	candidate := func() *redlock.Election {
		e, err := redlock.NewElection(newLocker(), name, kindTTL)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a, b, watcher := candidate(), candidate(), candidate()
	if err := a.Campaign(ctx(t), "a"); err != nil {
		t.Fatalf("a's Campaign: %v", err)
	}
	octx, stop := context.WithCancel(ctx(t))
	defer stop()
	seen := watcher.Observe(octx)
	next := func(what string) redlock.Leader {
		t.Helper()
		select {
		case ldr := <-seen:
			return ldr
		case <-time.After(patience):
			t.Fatalf("the observer did not see %s within %v", what, patience)
		}
		return redlock.Leader{}
	}
	if got := next("a"); got.Value != "a" || got.Term != a.Term() {
		t.Fatalf("observed %+v, want a in term %d", got, a.Term())
	}
	if err := a.Proclaim(ctx(t), "a2"); err != nil {
		t.Fatalf("Proclaim: %v", err)
	}
	if got := next("a's proclaimed value"); got.Value != "a2" || got.Term != a.Term() {
		t.Fatalf("observed %+v, want a2 in term %d", got, a.Term())
	}
	won := make(chan error, 1)
	go func() { won <- b.Campaign(ctx(t), "b") }()
	first := a.Term()
	if err := a.Resign(ctx(t)); err != nil {
		t.Fatalf("Resign: %v", err)
	}
	select {
	case err := <-won:
		if err != nil {
			t.Fatalf("b's Campaign: %v", err)
		}
	case <-time.After(patience):
		t.Fatalf("b did not lead within %v of a's Resign", patience)
	}
	if b.Term() <= first {
		t.Fatalf("b's term %d is not above a's %d", b.Term(), first)
	}
	if got := next("b"); got.Value != "b" || got.Term != b.Term() {
		t.Fatalf("observed %+v, want b in term %d", got, b.Term())
	}
	if ldr, err := watcher.Leader(ctx(t)); err != nil || ldr.Term != b.Term() {
		t.Fatalf("Leader = %+v, %v; want b's term %d", ldr, err, b.Term())
	}
	if err := b.Resign(ctx(t)); err != nil {
		t.Fatalf("b's Resign: %v", err)
	}
}
