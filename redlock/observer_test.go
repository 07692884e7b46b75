package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// recorder is an Observer that keeps every event.
type recorder struct {
	mu       sync.Mutex
	acquires []redlock.AcquireEvent
	releases []redlock.ReleaseEvent
	renews   []redlock.RenewEvent
	losses   []redlock.LostEvent
	nodeErrs []redlock.NodeErrorEvent
}

func (r *recorder) Acquire(e redlock.AcquireEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acquires = append(r.acquires, e)
}

func (r *recorder) Release(e redlock.ReleaseEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.releases = append(r.releases, e)
}

func (r *recorder) Renew(e redlock.RenewEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.renews = append(r.renews, e)
}

func (r *recorder) Lost(e redlock.LostEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.losses = append(r.losses, e)
}

func (r *recorder) NodeError(e redlock.NodeErrorEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodeErrs = append(r.nodeErrs, e)
}

// lastAcquire returns the latest Acquire event, failing when there is none.
func (r *recorder) lastAcquire(t *testing.T) redlock.AcquireEvent {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.acquires) == 0 {
		t.Fatal("no Acquire event")
	}
	return r.acquires[len(r.acquires)-1]
}

func (r *recorder) counts() (acquires, releases, renews, losses int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.acquires), len(r.releases), len(r.renews), len(r.losses)
}

// Every acquisition call is told, with its key, kind, wait, attempts and
// outcome, and every Unlock with its hold time.
func TestObserverAcquireAndRelease(t *testing.T) {
	_, nodes := cluster(t, 3)
	rec := &recorder{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec})
	other := newLocker(t, asNodes(nodes), redlock.Config{})

	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if e := rec.lastAcquire(t); e.Key != "k" || e.Kind != redlock.KindLock || e.Attempts != 1 || e.Err != nil || e.Wait <= 0 {
		t.Fatalf("Acquire after a granted TryLock = %+v", e)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	if len(rec.releases) != 1 || rec.releases[0].Key != "k" || rec.releases[0].Kind != redlock.KindLock ||
		rec.releases[0].Err != nil || rec.releases[0].Held < 0 {
		t.Fatalf("Release events after one Unlock = %+v", rec.releases)
	}
	rec.mu.Unlock()

	// A second Unlock fails, and is told with its error.
	second := lk.Unlock(t.Context())
	rec.mu.Lock()
	if len(rec.releases) != 2 || !errors.Is(rec.releases[1].Err, redlock.ErrLockLost) || rec.releases[1].Err != second {
		t.Fatalf("Release events after a second Unlock = %+v, want its error %v", rec.releases, second)
	}
	rec.mu.Unlock()

	held, err := other.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Unlock(context.Background())
	_, err = l.TryLock(t.Context(), "k", time.Minute)
	if e := rec.lastAcquire(t); e.Attempts != 1 || !errors.Is(e.Err, redlock.ErrNotAcquired) || e.Err != err {
		t.Fatalf("Acquire after a refused TryLock = %+v, want its error %v", e, err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	before := time.Now()
	_, err = l.Lock(ctx, "k", time.Minute)
	took := time.Since(before)
	e := rec.lastAcquire(t)
	if e.Attempts < 1 || !errors.Is(e.Err, context.DeadlineExceeded) || e.Err != err || e.Wait <= 0 || e.Wait > took {
		t.Fatalf("Acquire after a Lock that waited in vain = %+v, want its error %v and a wait within the call's %v", e, err, took)
	}

	_, err = l.TryLock(t.Context(), "", time.Minute)
	if e := rec.lastAcquire(t); e.Attempts != 0 || !errors.Is(e.Err, redlock.ErrInvalid) || e.Err != err {
		t.Fatalf("Acquire after bad input = %+v, want no attempt and %v", e, err)
	}
	if a, _, _, lost := rec.counts(); a != 4 || lost != 0 {
		t.Fatalf("%d Acquire and %d Lost events, want 4 and 0", a, lost)
	}
}

// Each kind of lock names itself in the events.
func TestObserverKinds(t *testing.T) {
	_, nodes := cluster(t, 3)
	for _, tc := range []struct {
		kind    string
		fencing bool
		lock    func(l *redlock.Locker) (*redlock.Lock, error)
	}{
		{redlock.KindLock, false, func(l *redlock.Locker) (*redlock.Lock, error) { return l.Lock(t.Context(), "plain", time.Minute) }},
		{redlock.KindFenced, true, func(l *redlock.Locker) (*redlock.Lock, error) { return l.Lock(t.Context(), "fenced", time.Minute) }},
		{redlock.KindReentrant, false, func(l *redlock.Locker) (*redlock.Lock, error) {
			return l.Reentrant("re", "owner").Lock(t.Context(), time.Minute)
		}},
		{redlock.KindRead, false, func(l *redlock.Locker) (*redlock.Lock, error) { return l.RWMutex("rw").RLock(t.Context(), time.Minute) }},
		{redlock.KindWrite, true, func(l *redlock.Locker) (*redlock.Lock, error) { return l.RWMutex("rw2").Lock(t.Context(), time.Minute) }},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			rec := &recorder{}
			l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec, Fencing: tc.fencing})
			lk, err := tc.lock(l)
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Extend(t.Context(), time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.acquires) != 1 || rec.acquires[0].Kind != tc.kind || rec.acquires[0].Err != nil {
				t.Errorf("Acquire events = %+v, want one of kind %q", rec.acquires, tc.kind)
			}
			if len(rec.renews) != 1 || rec.renews[0].Kind != tc.kind {
				t.Errorf("Renew events = %+v, want one of kind %q", rec.renews, tc.kind)
			}
			if len(rec.releases) != 1 || rec.releases[0].Kind != tc.kind {
				t.Errorf("Release events = %+v, want one of kind %q", rec.releases, tc.kind)
			}
		})
	}
}

// Every Extend is told with the Until it left, manual ones as such.
func TestObserverRenew(t *testing.T) {
	_, nodes := cluster(t, 3)
	rec := &recorder{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec})
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Extend(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	late := lk.Extend(t.Context(), time.Minute)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.renews) != 2 {
		t.Fatalf("Renew events = %+v, want 2", rec.renews)
	}
	if e := rec.renews[0]; e.Key != "k" || e.Auto || e.Err != nil || !e.Until.Equal(lk.Until()) {
		t.Errorf("Renew after a granted Extend = %+v, want manual, nil error, Until %v", e, lk.Until())
	}
	if e := rec.renews[1]; e.Auto || !errors.Is(e.Err, redlock.ErrLockLost) || e.Err != late {
		t.Errorf("Renew after an Extend of an unlocked lock = %+v, want its error %v", e, late)
	}
	if len(rec.losses) != 0 {
		t.Errorf("Lost events after Unlock = %+v, want none", rec.losses)
	}
}

// The auto-renewal's Extends are told as such; a renewal that finds the
// lock gone is told as a loss.
func TestObserverAutoRenewAndLoss(t *testing.T) {
	_, nodes := cluster(t, 3)
	rec := &recorder{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec, AutoRenew: true, NodeTimeout: 100 * time.Millisecond})
	lk, err := l.TryLock(t.Context(), "k", 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	await(t, "an auto-renewal", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.renews) > 0
	})
	rec.mu.Lock()
	if e := rec.renews[0]; !e.Auto || e.Key != "k" || e.Kind != redlock.KindLock {
		t.Errorf("first Renew = %+v, want the auto-renewal's", e)
	}
	rec.mu.Unlock()
	for _, n := range nodes {
		if _, err := n.Do(t.Context(), "DEL", "k"); err != nil {
			t.Fatal(err)
		}
	}
	<-lk.Done()
	await(t, "the loss told", func() bool {
		_, _, _, lost := rec.counts()
		return lost > 0
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.losses) != 1 || rec.losses[0].Key != "k" || rec.losses[0].Kind != redlock.KindLock ||
		!errors.Is(rec.losses[0].Cause, redlock.ErrLockLost) || rec.losses[0].Cause != lk.Err() {
		t.Fatalf("Lost events = %+v, want one matching ErrLockLost and Err %v", rec.losses, lk.Err())
	}
}

// A lock whose validity passes is told as lost even when nobody watches
// it, once; its late Unlock is told as a release.
func TestObserverLossAtUntil(t *testing.T) {
	_, nodes := cluster(t, 3)
	rec := &recorder{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec, NodeTimeout: 50 * time.Millisecond})
	lk, err := l.TryLock(t.Context(), "k", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	await(t, "the loss told", func() bool {
		_, _, _, lost := rec.counts()
		return lost > 0
	})
	if !errors.Is(lk.Err(), redlock.ErrLockLost) {
		t.Fatalf("Err = %v, want ErrLockLost", lk.Err())
	}
	unlockErr := lk.Unlock(t.Context())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.losses) != 1 || !errors.Is(rec.losses[0].Cause, redlock.ErrLockLost) {
		t.Fatalf("Lost events = %+v, want one matching ErrLockLost", rec.losses)
	}
	if len(rec.releases) != 1 || rec.releases[0].Err != unlockErr || rec.releases[0].Held < 300*time.Millisecond-clockSlack {
		t.Fatalf("Release events = %+v, want one with Unlock's error %v, held about 300ms or more", rec.releases, unlockErr)
	}
}

// clockSlack allows for the Locker's clock reading being taken a little
// after the grant.
const clockSlack = 50 * time.Millisecond

// A failed call to a master is told to the Observer and, beside it, to
// OnNodeError.
func TestObserverNodeError(t *testing.T) {
	servers, nodes := cluster(t, 3)
	rec := &recorder{}
	var mu sync.Mutex
	legacy := map[string]int{}
	l := newLocker(t, asNodes(nodes), redlock.Config{
		Observer:    rec,
		NodeTimeout: 100 * time.Millisecond,
		OnNodeError: func(op, addr string, err error) {
			mu.Lock()
			defer mu.Unlock()
			legacy[op+" "+addr]++
		},
	})
	warm(t, l, nodes, 5*time.Second) // the restart guard reads the records with every master up
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	defer servers[2].Resume()
	lk, err := l.TryLock(t.Context(), "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	frozen := servers[2].Addr()
	// Besides: the restart guard's reads of the records ("guard"), when
	// a round runs while the master is frozen.
	lockErrs := func() []redlock.NodeErrorEvent {
		var out []redlock.NodeErrorEvent
		for _, e := range rec.nodeErrs {
			if e.Op != "guard" {
				out = append(out, e)
			}
		}
		return out
	}
	await(t, "lock and unlock errors told for the frozen master", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(lockErrs()) >= 2 // the unlock's release is sent again, and may fail again
	})
	rec.mu.Lock()
	defer rec.mu.Unlock()
	ops := map[string]bool{}
	for _, e := range lockErrs() {
		if e.Addr != frozen || e.Err == nil {
			t.Errorf("NodeError %+v, want the frozen master %s with an error", e, frozen)
		}
		ops[e.Op] = true
	}
	if !ops["lock"] || !ops["unlock"] {
		t.Errorf("NodeError ops = %v, want lock and unlock", ops)
	}
	mu.Lock()
	defer mu.Unlock()
	delete(legacy, "guard "+frozen)
	if legacy["lock "+frozen] != 1 || legacy["unlock "+frozen] < 1 || len(legacy) != 2 {
		t.Errorf("OnNodeError saw %v, want one lock and one unlock error of %s", legacy, frozen)
	}
}

// A typed nil Observer is refused.
func TestObserverTypedNil(t *testing.T) {
	_, nodes := cluster(t, 1)
	var rec *recorder
	if _, err := redlock.New(asNodes(nodes), redlock.Config{Observer: rec}); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("New with a nil *recorder as Observer = %v, want ErrInvalid", err)
	}
}
