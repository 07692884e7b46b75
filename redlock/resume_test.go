package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A lock taken by one Locker is resumed by another with its token: the
// masters' TTL moves to the new one, the resumed lock unlocks it
// everywhere, and the first holder's lock is gone for it.
func TestResumeTakesOver(t *testing.T) {
	for _, fencing := range []bool{false, true} {
		_, nodes := cluster(t, 3)
		holder := newLocker(t, asNodes(nodes), redlock.Config{Fencing: fencing})
		worker := newLocker(t, asNodes(nodes), redlock.Config{Fencing: fencing})
		first, err := holder.TryLock(t.Context(), "job", 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		awaitValues(t, nodes, "job", repeat(first.Token(), 3)...) // TryLock may return at the quorum
		start := time.Now()
		lk, err := worker.Resume(t.Context(), "job", first.Token(), 2*time.Minute)
		if err != nil {
			t.Fatalf("fencing %v: Resume: %v", fencing, err)
		}
		if lk.Key() != "job" || lk.Token() != first.Token() || lk.Fence() < first.Fence() || lk.Err() != nil {
			t.Fatalf("resumed lock: key %q, token %q, fence %d (first %d), err %v", lk.Key(), lk.Token(), lk.Fence(), first.Fence(), lk.Err())
		}
		if left := lk.Until().Sub(start); left <= time.Minute || left > 2*time.Minute {
			t.Fatalf("Until %v after the call, want the new TTL's validity", left)
		}
		await(t, "the new TTL on every master", func() bool {
			for _, ms := range pttls(t, nodes, "job") {
				if ms <= 60000 {
					return false
				}
			}
			return true
		})
		checkUntilEnforced(t, lk, nodes, worker.Quorum())
		if err := lk.Extend(t.Context(), time.Minute); err != nil {
			t.Fatalf("Extend of the resumed lock: %v", err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatalf("Unlock of the resumed lock: %v", err)
		}
		awaitValues(t, nodes, "job", repeat("", 3)...)
		if err := first.Extend(t.Context(), time.Minute); !errors.Is(err, redlock.ErrLockLost) {
			t.Fatalf("the first holder extends a lock the worker released: %v", err)
		}
	}
}

// A wrong token, a free key, an expired lock: Resume fails with
// ErrNotAcquired and creates nothing.
func TestResumeNeverCreates(t *testing.T) {
	_, nodes := cluster(t, 3)
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	worker := newLocker(t, asNodes(nodes), redlock.Config{})
	held, err := holder.TryLock(t.Context(), "held", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "held", repeat(held.Token(), 3)...)
	before := pttls(t, nodes, "held")

	resume := func(key, token string) *redlock.QuorumError {
		t.Helper()
		lk, err := worker.Resume(t.Context(), key, token, time.Minute)
		var qerr *redlock.QuorumError
		if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) {
			t.Fatalf("Resume(%q, %q) = %v, %v; want a *QuorumError matching ErrNotAcquired", key, token, lk, err)
		}
		return qerr
	}
	if q := resume("held", "not-the-token"); q.Refused < 2 || q.Granted != 0 {
		t.Fatalf("wrong token: %+v", q)
	}
	if got := values(t, nodes, "held"); got[0] != held.Token() || got[1] != held.Token() || got[2] != held.Token() {
		t.Fatalf("a wrong token's Resume changed the lock: %q", got)
	}
	for i, ms := range pttls(t, nodes, "held") {
		if ms > before[i] {
			t.Fatalf("a wrong token's Resume extended the lock on master %d: PTTL %d, was %d", i, ms, before[i])
		}
	}

	resume("free", held.Token())
	if n := countKey(t, nodes, "free"); n != 0 {
		t.Fatalf("Resume of a free key created it on %d masters", n)
	}

	// A lock that expired: awaited on the masters, not slept for.
	short := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 20 * time.Millisecond})
	gone, err := short.TryLock(t.Context(), "short", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "short", repeat("", 3)...)
	resume("short", gone.Token())
	if n := countKey(t, nodes, "short"); n != 0 {
		t.Fatalf("Resume of an expired lock re-created it on %d masters", n)
	}
}

// When only a minority of the masters still hold the token, Resume fails:
// the masters that lost the key get nothing, and the one that kept it keeps
// the token's key (Resume deletes nothing), at most for the new TTL.
func TestResumeMinority(t *testing.T) {
	_, nodes := cluster(t, 3)
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	worker := newLocker(t, asNodes(nodes), redlock.Config{})
	held, err := holder.TryLock(t.Context(), "job", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "job", repeat(held.Token(), 3)...)
	for _, n := range nodes[:2] {
		if _, err := n.Do(t.Context(), "DEL", "job"); err != nil {
			t.Fatal(err)
		}
	}
	_, err = worker.Resume(t.Context(), "job", held.Token(), time.Minute)
	var qerr *redlock.QuorumError
	if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) {
		t.Fatalf("Resume with one of three masters holding: %v", err)
	}
	// Decided at the second refusal: the third master may not have
	// answered yet; await what it did.
	if qerr.Refused != 2 || qerr.Granted > 1 {
		t.Fatalf("%+v, want 2 refused", qerr)
	}
	awaitValues(t, nodes, "job", "", "", held.Token())
	if ms := pttls(t, nodes, "job")[2]; ms > 60000 {
		t.Fatalf("the keeping master's PTTL is %dms, above the Resume's TTL", ms)
	}
}

// Bad input is refused with ErrInvalid before any traffic.
func TestResumeBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	fenced := newLocker(t, asNodes(sp), redlock.Config{Fencing: true})
	var nilCtx context.Context
	for name, call := range map[string]func() error{
		"empty token":   func() error { _, err := l.Resume(t.Context(), "k", "", time.Second); return err },
		"empty key":     func() error { _, err := l.Resume(t.Context(), "", "tok", time.Second); return err },
		"zero ttl":      func() error { _, err := l.Resume(t.Context(), "k", "tok", 0); return err },
		"negative ttl":  func() error { _, err := l.Resume(t.Context(), "k", "tok", -time.Second); return err },
		"ttl too short": func() error { _, err := l.Resume(t.Context(), "k", "tok", 40*time.Millisecond); return err },
		"nil ctx":       func() error { _, err := l.Resume(nilCtx, "k", "tok", time.Second); return err },
		"fenced a}b":    func() error { _, err := fenced.Resume(t.Context(), "a}b", "tok", time.Second); return err },
	} {
		if err := call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if n := totalCalls(sp); n != 0 {
		t.Fatalf("bad input sent %d commands to Redis", n)
	}
}

// With Config.AutoRenew the resumed lock is renewed: it outlives its TTL
// until Unlock.
func TestResumeAutoRenew(t *testing.T) {
	_, nodes := cluster(t, 3)
	holder := newLocker(t, asNodes(nodes), redlock.Config{})
	worker := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 200 * time.Millisecond, AutoRenew: true})
	held, err := holder.TryLock(t.Context(), "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "job", repeat(held.Token(), 3)...)
	lk, err := worker.Resume(t.Context(), "job", held.Token(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	first := lk.Until()
	await(t, "a renewal to move Until", func() bool { return lk.Until().After(first) })
	if err := lk.Err(); err != nil {
		t.Fatalf("renewed lock ended: %v", err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "job", repeat("", 3)...)
}

// With fencing, a resumed lock's token is the highest counter among the
// masters that resumed it, written back to them: no lower than the first
// holder's, and the next holder's is greater, whichever quorum it gets.
func TestResumeFenced(t *testing.T) {
	_, nodes := cluster(t, 3)
	holder := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	worker := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true, Quorum: 3}) // every master votes
	first, err := holder.TryLock(t.Context(), "job", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "job", repeat(first.Token(), 3)...)
	// A stray INCR on one master (an attempt that failed elsewhere) put its
	// counter ahead of the others.
	stray := first.Fence() + 5
	if _, err := nodes[2].Do(t.Context(), "SET", "{job}:fence", stray); err != nil {
		t.Fatal(err)
	}
	lk, err := worker.Resume(t.Context(), "job", first.Token(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if lk.Fence() < first.Fence() {
		t.Fatalf("resumed fence %d below the first holder's %d", lk.Fence(), first.Fence())
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "job", repeat("", 3)...)
	// The next holder, on the two masters that did not see the stray INCR
	// unless the resume wrote its token back there.
	next := newLocker(t, asNodes(nodes[:2]), redlock.Config{Fencing: true, Quorum: 2})
	lk2, err := next.TryLock(t.Context(), "job", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer lk2.Unlock(t.Context())
	if lk2.Fence() <= lk.Fence() {
		t.Fatalf("next holder's fence %d after the resumed lock's %d", lk2.Fence(), lk.Fence())
	}
}
