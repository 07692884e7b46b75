package redlock_test

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// A lock taken WithMetadata keeps its record on every master that holds
// it, for as long as the lock: Holder reads it from a quorum, Extend and
// renewal move its expiry, Unlock deletes it; plain and fenced alike.
func TestMetadataLivesWithTheLock(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	md := map[string]string{"host": "web-3", "request": "r-42"}
	for _, fencing := range []bool{false, true} {
		key := "md-plain"
		if fencing {
			key = "md-fenced"
		}
		t.Run(key, func(t *testing.T) {
			ctx := t.Context()
			lk, err := l.Lock(ctx, key, 2*time.Second, redlock.WithMetadata(md), redlock.WithFencing(fencing))
			if err != nil {
				t.Fatal(err)
			}
			if got := lk.Metadata(); !maps.Equal(got, md) {
				t.Fatalf("Metadata() = %v, want %v", got, md)
			}
			h, err := l.Holder(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if h.Token != lk.Token() || !maps.Equal(h.Metadata, md) || h.Masters != 3 || h.TTL <= 0 || h.TTL > 2*time.Second {
				t.Fatalf("Holder = %+v, want token %s, %v on 3 masters", h, lk.Token(), md)
			}
			if err := lk.Extend(ctx, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			for i, ms := range pttls(t, nodes, layout.Holder(key)) {
				if ms < 10_000 {
					t.Fatalf("record's TTL after Extend(30s) is %d ms on master %d: not extended with the lock", ms, i)
				}
			}
			if err := lk.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			awaitValues(t, nodes, layout.Holder(key), "", "", "")
			if _, err := l.Holder(ctx, key); !errors.Is(err, redlock.ErrNotHeld) {
				t.Fatalf("Holder after Unlock: %v, want ErrNotHeld", err)
			}
		})
	}
}

// SetMetadata replaces the record on the quorum and announces it; a lock
// without a record has none to replace.
func TestSetMetadata(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	lk, err := l.Lock(ctx, "md-set", 5*time.Second, redlock.WithMetadata(map[string]string{"step": "1"}))
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock(ctx)
	if err := lk.SetMetadata(ctx, map[string]string{"step": "2"}); err != nil {
		t.Fatal(err)
	}
	if h, err := l.Holder(ctx, "md-set"); err != nil || h.Metadata["step"] != "2" || len(h.Metadata) != 1 {
		t.Fatalf("Holder after SetMetadata = %+v, %v", h, err)
	}
	if got := lk.Metadata()["step"]; got != "2" {
		t.Fatalf("Metadata() after SetMetadata: step %q", got)
	}
	bare, err := l.Lock(ctx, "md-bare", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Unlock(ctx)
	if err := bare.SetMetadata(ctx, map[string]string{"a": "b"}); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("SetMetadata on a lock without a record: %v, want ErrInvalid", err)
	}
	if bare.Metadata() != nil {
		t.Fatalf("Metadata() of a lock without a record = %v, want nil", bare.Metadata())
	}
	if h, err := l.Holder(ctx, "md-bare"); err != nil || h.Metadata != nil || h.Token != bare.Token() {
		t.Fatalf("Holder of a lock without a record = %+v, %v", h, err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lk.SetMetadata(ctx, map[string]string{"step": "3"}); !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("SetMetadata after Unlock: %v, want ErrLockLost", err)
	}
}

// Bad metadata, and metadata on a kind that keeps no record, are refused
// before anything is sent.
func TestMetadataRefused(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	ctx := t.Context()
	big := map[string]string{"x": strings.Repeat("v", redlock.MaxMetadataLen)}
	calls := map[string]func() error{
		"empty name": func() error {
			_, err := l.Lock(ctx, "k", time.Second, redlock.WithMetadata(map[string]string{"": "v"}))
			return err
		},
		"token field": func() error {
			_, err := l.TryLock(ctx, "k", time.Second, redlock.WithMetadata(map[string]string{"token": "v"}))
			return err
		},
		"too big": func() error {
			_, err := l.Lock(ctx, "k", time.Second, redlock.WithMetadata(big))
			return err
		},
		"reentrant": func() error {
			_, err := l.Reentrant("k", "o").Lock(ctx, time.Second, redlock.WithMetadata(nil))
			return err
		},
		"semaphore": func() error {
			_, err := l.Semaphore("k", 2).Acquire(ctx, time.Second, redlock.WithMetadata(nil))
			return err
		},
		"resume": func() error {
			_, err := l.Resume(ctx, "k", "tok", time.Second, redlock.WithMetadata(nil))
			return err
		},
		"holder of a bad key": func() error {
			_, err := l.Holder(ctx, "")
			return err
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	for _, s := range sp {
		if n := s.calls.Load(); n != 0 {
			t.Fatalf("%s got %d calls for bad input", s.Addr(), n)
		}
	}
}

// Holder tells "no holder" from "the masters are down".
func TestHolderUnavailable(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 200 * time.Millisecond})
	ctx := t.Context()
	servers[0].Stop()
	servers[1].Stop()
	_, err := l.Holder(ctx, "down")
	if !errors.Is(err, redlock.ErrUnavailable) || errors.Is(err, redlock.ErrNotHeld) || errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Holder with 2 of 3 masters down: %v, want ErrUnavailable alone", err)
	}
	var qerr *redlock.QuorumError
	if !errors.As(err, &qerr) || qerr.Op != "holder" {
		t.Fatalf("Holder's error %v is not a QuorumError of op holder", err)
	}
}
