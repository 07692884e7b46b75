package redlock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

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

// Bad metadata, on any kind, is refused
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
		"bad fields on a reentrant lock": func() error {
			_, err := l.Reentrant("k", "o").Lock(ctx, time.Second, redlock.WithMetadata(map[string]string{"token": "v"}))
			return err
		},
		"bad fields on a semaphore": func() error {
			_, err := l.Semaphore("k", 2).Acquire(ctx, time.Second, redlock.WithMetadata(big))
			return err
		},
		"bad fields on a resume": func() error {
			_, err := l.Resume(ctx, "k", "tok", time.Second, redlock.WithMetadata(map[string]string{"": "v"}))
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
