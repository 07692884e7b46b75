package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// attemptsSeen records each acquisition call's attempts.
type attemptsSeen struct {
	redlock.NopObserver
	mu   sync.Mutex
	seen []int
}

func (a *attemptsSeen) Acquire(e redlock.AcquireEvent) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seen = append(a.seen, e.Attempts)
}

func (a *attemptsSeen) last() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seen[len(a.seen)-1]
}

// WithFencing turns fencing on or off per call, for every kind that can
// carry a token, whatever the Locker's Config says.
func TestWithFencing(t *testing.T) {
	_, nodes := cluster(t, 3)
	plain := newLocker(t, asNodes(nodes), redlock.Config{})
	fenced := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	on := redlock.WithFencing(true)
	const ttl = 5 * time.Second
	kinds := []struct {
		name string
		lock func(ctx context.Context) (*redlock.Lock, error)
	}{
		{"lock", func(ctx context.Context) (*redlock.Lock, error) { return plain.Lock(ctx, "f-lock", ttl, on) }},
		{"trylock", func(ctx context.Context) (*redlock.Lock, error) { return plain.TryLock(ctx, "f-try", ttl, on) }},
		{"reentrant", func(ctx context.Context) (*redlock.Lock, error) {
			return plain.Reentrant("f-reentrant", "o").Lock(ctx, ttl, on)
		}},
		{"write", func(ctx context.Context) (*redlock.Lock, error) { return plain.RWMutex("f-rw").Lock(ctx, ttl, on) }},
		{"fair", func(ctx context.Context) (*redlock.Lock, error) { return plain.Fair("f-fair").Lock(ctx, ttl, on) }},
		{"semaphore", func(ctx context.Context) (*redlock.Lock, error) {
			return plain.Semaphore("f-sem", 2).Acquire(ctx, ttl, on)
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			lk, err := k.lock(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			defer lk.Unlock(context.Background())
			if lk.Fence() <= 0 {
				t.Errorf("WithFencing(true) on a plain Locker: Fence = %d", lk.Fence())
			}
		})
	}
	lk, err := fenced.Lock(t.Context(), "f-off", ttl, redlock.WithFencing(false))
	if err != nil {
		t.Fatal(err)
	}
	if lk.Fence() != 0 {
		t.Errorf("WithFencing(false) on a fenced Locker: Fence = %d", lk.Fence())
	}
	// A fenced lock handed over is resumed as one by a Locker whose
	// Config says otherwise.
	held, err := plain.Lock(t.Context(), "f-resume", ttl, on)
	if err != nil {
		t.Fatal(err)
	}
	resumed, err := plain.Resume(t.Context(), "f-resume", held.Token(), ttl, on)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Fence() < held.Fence() {
		t.Errorf("resumed with WithFencing: Fence %d, below the holder's %d", resumed.Fence(), held.Fence())
	}
}

// WithAutoRenew renews a lock of a Locker that does not renew.
func TestWithAutoRenew(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond})
	lk, err := l.Lock(t.Context(), "k", 400*time.Millisecond, redlock.WithAutoRenew(true))
	if err != nil {
		t.Fatal(err)
	}
	first := lk.Until()
	await(t, "a renewal", func() bool { return lk.Until().After(first) })
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// WithMaxAttempts gives up after that many attempts, before ctx ends,
// with the last attempt's refusal; WithRetry's strategy spaces them.
func TestWithMaxAttemptsAndRetry(t *testing.T) {
	_, nodes := cluster(t, 3)
	seen := &attemptsSeen{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: seen, DisableWakeOnRelease: true})
	holder, err := newLocker(t, asNodes(nodes), redlock.Config{}).Lock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(context.Background())
	var backoffs atomic.Int64
	retry := redlock.RetryFunc(func(int) time.Duration { backoffs.Add(1); return time.Millisecond })
	_, err = l.Lock(t.Context(), "k", time.Second, redlock.WithMaxAttempts(4), redlock.WithRetry(retry))
	var qerr *redlock.QuorumError
	if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) || qerr.Refused < 2 || t.Context().Err() != nil {
		t.Fatalf("Lock of a held key with WithMaxAttempts(4): %v, want the last attempt's refusal", err)
	}
	if got := seen.last(); got != 4 {
		t.Errorf("%d attempts, want 4", got)
	}
	if backoffs.Load() == 0 {
		t.Error("WithRetry's strategy was never asked")
	}
	_, err = l.Semaphore("full", 1).Acquire(t.Context(), time.Second, redlock.WithMaxAttempts(2))
	if err != nil {
		t.Fatal(err) // the first permit is free
	}
	if _, err := l.Semaphore("full", 1).Acquire(t.Context(), time.Second, redlock.WithMaxAttempts(2)); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Errorf("Acquire of a full semaphore with WithMaxAttempts(2): %v, want ErrNotAcquired", err)
	}
}

// WithToken's tokens are the lock's on the masters, one per attempt; a
// bad one fails the call with ErrInvalid.
func TestWithToken(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{DisableWakeOnRelease: true})
	gen := func(attempt int) string { return fmt.Sprintf("req-7/%d", attempt) }
	lk, err := l.TryLock(t.Context(), "k", 5*time.Second, redlock.WithToken(gen))
	if err != nil {
		t.Fatal(err)
	}
	if lk.Token() != "req-7/1" {
		t.Errorf("Token = %q, want req-7/1", lk.Token())
	}
	awaitValues(t, nodes, "k", repeat("req-7/1", 3)...)

	// The next attempts of a waiting call get tokens of their own; one
	// that repeats the previous attempt's fails the call.
	var tries []int
	_, err = l.Lock(t.Context(), "k", time.Second, redlock.WithMaxAttempts(3), redlock.WithRetry(redlock.RetryFunc(func(int) time.Duration { return time.Millisecond })),
		redlock.WithToken(func(attempt int) string { tries = append(tries, attempt); return "same" }))
	if !errors.Is(err, redlock.ErrInvalid) || len(tries) != 2 {
		t.Errorf("a token reused by attempt 2: %v after attempts %v, want ErrInvalid at attempt 2", err, tries)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []string{"", strings.Repeat("t", redlock.MaxTokenLen+1)} {
		_, err := l.TryLock(t.Context(), "bad", time.Second, redlock.WithToken(func(int) string { return bad }))
		if !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("token of %d bytes: %v, want ErrInvalid", len(bad), err)
		}
	}
	for _, n := range nodes {
		if v := get(t, n, "bad"); v != "" {
			t.Errorf("a refused token reached %s: %q", n.Addr(), v)
		}
	}
}

// A bad option fails every kind's call with ErrInvalid, before anything
// is sent.
func TestBadOptions(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	var nilRetry redlock.RetryFunc
	bad := map[string]redlock.Option{
		"WithRetry(nil)":       redlock.WithRetry(nil),
		"WithRetry(typed nil)": redlock.WithRetry(nilRetry),
		"WithMaxAttempts(0)":   redlock.WithMaxAttempts(0),
		"WithToken(nil)":       redlock.WithToken(nil),
		"a nil Option":         nil,
	}
	for name, o := range bad {
		calls := map[string]func() error{
			"Lock":      func() error { _, err := l.Lock(t.Context(), "k", time.Second, o); return err },
			"LockMulti": func() error { _, err := l.LockMulti(t.Context(), []string{"a", "b"}, time.Second, o); return err },
			"Reentrant": func() error { _, err := l.Reentrant("k", "o").Lock(t.Context(), time.Second, o); return err },
			"RLock":     func() error { _, err := l.RWMutex("k").RLock(t.Context(), time.Second, o); return err },
			"Fair":      func() error { _, err := l.Fair("k").Lock(t.Context(), time.Second, o); return err },
			"Semaphore": func() error { _, err := l.Semaphore("k", 2).Acquire(t.Context(), time.Second, o); return err },
			"Resume":    func() error { _, err := l.Resume(t.Context(), "k", "token", time.Second, o); return err },
			"Do": func() error {
				return l.Do(t.Context(), "k", time.Second, func(context.Context) error { return nil }, o)
			},
		}
		for call, f := range calls {
			if err := f(); !errors.Is(err, redlock.ErrInvalid) {
				t.Errorf("%s with %s: %v, want ErrInvalid", call, name, err)
			}
		}
	}
	for _, s := range sp {
		if n := s.calls.Load(); n != 0 {
			t.Errorf("%s: %d calls sent for bad options", s.Addr(), n)
		}
	}
}
