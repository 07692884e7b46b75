package nodetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// RunLockKinds runs the same lock tests for the plain, fenced, reentrant
// and read-write kinds, holder metadata (every exclusive kind) and leader
// election against whatever masters nodes reaches (real
// redis-server processes, or the in-memory masters of redlocktest/inmem).
// nodes returns one Node per master; it may return the same Nodes on every
// call. Each test uses keys of its own.
func RunLockKinds(t *testing.T, nodes func(t *testing.T) []redlock.Node) {
	t.Helper()
	k := kinds{nodes: nodes}
	t.Run("Plain", k.testPlain)
	t.Run("Expiry", k.testExpiry)
	t.Run("Fenced", k.testFenced)
	t.Run("Reentrant", k.testReentrant)
	t.Run("ReadWrite", k.testReadWrite)
	t.Run("WakeOnRelease", k.testWake)
	newLocker := func(t *testing.T) func() *redlock.Locker {
		return func() *redlock.Locker { return k.locker(t, redlock.Config{}) }
	}
	t.Run("Metadata", func(t *testing.T) { checkMetadata(t, newLocker(t)) })
	t.Run("Election", func(t *testing.T) { checkElection(t, newLocker(t)) })
}

type kinds struct {
	nodes func(t *testing.T) []redlock.Node
}

// locker returns a Locker over the masters; the node timeout is generous,
// for a loaded machine under the race detector.
func (k kinds) locker(t *testing.T, cfg redlock.Config) *redlock.Locker {
	t.Helper()
	if cfg.NodeTimeout == 0 {
		cfg.NodeTimeout = 500 * time.Millisecond
	}
	l, err := redlock.New(k.nodes(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const kindTTL = 10 * time.Second

// refused checks that an acquisition failed with ErrNotAcquired, and
// unlocks a lock that was wrongly granted.
func refused(t *testing.T, what string, lk *redlock.Lock, err error) {
	t.Helper()
	if err == nil {
		lk.Unlock(context.Background())
		t.Fatalf("%s: granted while it should be refused", what)
	}
	if !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("%s: %v, want ErrNotAcquired", what, err)
	}
}

// granted returns a function that checks an acquisition succeeded:
// granted(t, what)(l.TryLock(...)).
func granted(t *testing.T, what string) func(*redlock.Lock, error) *redlock.Lock {
	return func(lk *redlock.Lock, err error) *redlock.Lock {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return lk
	}
}

func unlock(t *testing.T, what string, lk *redlock.Lock) {
	t.Helper()
	if err := lk.Unlock(ctx(t)); err != nil {
		t.Fatalf("%s: Unlock: %v", what, err)
	}
}

// testPlain: lock, exclusion, extend, unlock, lock again.
func (k kinds) testPlain(t *testing.T) {
	l, key := k.locker(t, redlock.Config{}), key(t)
	a := granted(t, "first TryLock")(l.TryLock(ctx(t), key, kindTTL))
	b, err := l.TryLock(ctx(t), key, kindTTL)
	refused(t, "a second TryLock while held", b, err)
	before := a.Until()
	if err := a.Extend(ctx(t), 3*kindTTL); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if !a.Until().After(before) {
		t.Errorf("Until %v did not move past %v after Extend", a.Until(), before)
	}
	unlock(t, "first lock", a)
	if err := a.Extend(ctx(t), kindTTL); !errors.Is(err, redlock.ErrLockLost) {
		t.Errorf("Extend after Unlock: %v, want ErrLockLost", err)
	}
	c := granted(t, "TryLock after Unlock")(l.TryLock(ctx(t), key, kindTTL))
	if c.Token() == a.Token() {
		t.Error("a new lock reused the old token")
	}
	unlock(t, "second lock", c)
}

// testExpiry: a lock that is neither extended nor released ends when its
// TTL passes on the masters, and someone else gets it then.
func (k kinds) testExpiry(t *testing.T) {
	l, key := k.locker(t, redlock.Config{}), key(t)
	const short = time.Second
	a := granted(t, "TryLock")(l.TryLock(ctx(t), key, short))
	select {
	case <-a.Done():
	case <-time.After(patience):
		t.Fatal("the lock's Done did not close after its validity passed")
	}
	if !errors.Is(a.Err(), redlock.ErrLockLost) {
		t.Errorf("Err after expiry: %v, want ErrLockLost", a.Err())
	}
	var b *redlock.Lock
	eventually(t, "another TryLock succeeds once the TTL passed", func() bool {
		lk, err := l.TryLock(ctx(t), key, kindTTL)
		b = lk
		return err == nil
	})
	unlock(t, "the next holder", b)
}

// testFenced: each holder's fencing token is greater than the one before.
func (k kinds) testFenced(t *testing.T) {
	l, key := k.locker(t, redlock.Config{Fencing: true}), "{"+key(t)+"}"
	var last int64
	for i := range 3 {
		lk := granted(t, "TryLock")(l.TryLock(ctx(t), key, kindTTL))
		if lk.Fence() <= last {
			t.Errorf("holder %d got fencing token %d, not above %d", i, lk.Fence(), last)
		}
		last = lk.Fence()
		unlock(t, "fenced lock", lk)
	}
}

// testReentrant: an owner's holds nest; another owner is refused until
// the last of them is released.
func (k kinds) testReentrant(t *testing.T) {
	l, key := k.locker(t, redlock.Config{}), key(t)
	alice, bob := l.Reentrant(key, "alice"), l.Reentrant(key, "bob")
	outer := granted(t, "alice's first hold")(alice.TryLock(ctx(t), kindTTL))
	inner := granted(t, "alice's nested hold")(alice.TryLock(ctx(t), kindTTL))
	b, err := bob.TryLock(ctx(t), kindTTL)
	refused(t, "bob while alice holds twice", b, err)
	unlock(t, "alice's nested hold", inner)
	b, err = bob.TryLock(ctx(t), kindTTL)
	refused(t, "bob while alice still holds once", b, err)
	if err := outer.Extend(ctx(t), 2*kindTTL); err != nil {
		t.Fatalf("alice's Extend: %v", err)
	}
	unlock(t, "alice's first hold", outer)
	b = granted(t, "bob after alice's last Unlock")(bob.TryLock(ctx(t), kindTTL))
	unlock(t, "bob's hold", b)
}

// testReadWrite: readers share; a writer is refused while readers hold,
// and readers are refused while a writer holds.
func (k kinds) testReadWrite(t *testing.T) {
	l, key := k.locker(t, redlock.Config{}), "{"+key(t)+"}"
	m := l.RWMutex(key)
	r1 := granted(t, "first reader")(m.TryRLock(ctx(t), kindTTL))
	r2 := granted(t, "second reader")(m.TryRLock(ctx(t), kindTTL))
	w, err := m.TryLock(ctx(t), kindTTL)
	refused(t, "a writer while readers hold", w, err)
	if err := r1.Extend(ctx(t), 2*kindTTL); err != nil {
		t.Fatalf("a reader's Extend: %v", err)
	}
	unlock(t, "first reader", r1)
	w, err = m.TryLock(ctx(t), kindTTL)
	refused(t, "a writer while one reader holds", w, err)
	unlock(t, "second reader", r2)
	w = granted(t, "a writer once the readers left")(m.TryLock(ctx(t), kindTTL))
	r, err := m.TryRLock(ctx(t), kindTTL)
	refused(t, "a reader while the writer holds", r, err)
	w2, err := m.TryLock(ctx(t), kindTTL)
	refused(t, "a second writer", w2, err)
	unlock(t, "writer", w)
	r = granted(t, "a reader after the writer left")(m.TryRLock(ctx(t), kindTTL))
	unlock(t, "reader", r)
}

// testWake: a waiter in another Locker, whose backoff is an hour, gets the
// lock when the holder releases it: only the masters' release
// announcement can wake it. Skipped when the Nodes cannot Subscribe.
func (k kinds) testWake(t *testing.T) {
	nodes := k.nodes(t)
	if redlock.AbilitiesOf(nodes[0]).Subscribe == nil {
		t.Skip("the Nodes have no Abilities.Subscribe")
	}
	holder := k.locker(t, redlock.Config{})
	waiter := k.locker(t, redlock.Config{Retry: redlock.RetryFunc(func(int) time.Duration { return time.Hour })})
	for _, kind := range []struct {
		name    string
		hold    func(l *redlock.Locker, key string) (*redlock.Lock, error)
		wait    func(ctx context.Context, l *redlock.Locker, key string) (*redlock.Lock, error)
		channel func(key string) string
	}{
		{"Plain",
			func(l *redlock.Locker, key string) (*redlock.Lock, error) { return l.TryLock(ctx(t), key, kindTTL) },
			func(c context.Context, l *redlock.Locker, key string) (*redlock.Lock, error) {
				return l.Lock(c, key, kindTTL)
			},
			redlock.ReleaseChannel},
		{"Reentrant",
			func(l *redlock.Locker, key string) (*redlock.Lock, error) {
				return l.Reentrant(key, "alice").TryLock(ctx(t), kindTTL)
			},
			func(c context.Context, l *redlock.Locker, key string) (*redlock.Lock, error) {
				return l.Reentrant(key, "bob").Lock(c, kindTTL)
			},
			redlock.ReleaseChannel},
		{"WriterAfterReader",
			func(l *redlock.Locker, key string) (*redlock.Lock, error) {
				return l.RWMutex(key).TryRLock(ctx(t), kindTTL)
			},
			func(c context.Context, l *redlock.Locker, key string) (*redlock.Lock, error) {
				return l.RWMutex(key).Lock(c, kindTTL)
			},
			redlock.ReleaseChannel},
	} {
		t.Run(kind.name, func(t *testing.T) {
			key := "{" + key(t) + "}"
			held := granted(t, "the holder")(kind.hold(holder, key))
			type result struct {
				lk  *redlock.Lock
				err error
			}
			got := make(chan result, 1)
			wctx, cancel := context.WithTimeout(context.Background(), patience)
			defer cancel()
			go func() {
				lk, err := kind.wait(wctx, waiter, key)
				got <- result{lk, err}
			}()
			channel := kind.channel(key)
			for i, n := range nodes {
				eventually(t, fmt.Sprintf("the waiter subscribes on master %d", i), func() bool {
					r, err := n.Do(ctx(t), "PUBSUB", "NUMSUB", channel)
					vs, _ := r.([]any)
					return err == nil && len(vs) == 2 && vs[1] == int64(1)
				})
			}
			unlock(t, "the holder", held)
			var r result
			select {
			case r = <-got:
			case <-time.After(patience):
				t.Fatalf("the waiter did not get the lock within %v of the release", patience)
			}
			if r.err != nil {
				t.Fatalf("the waiter: %v; now %s", r.err, describeNodes(t, nodes, key, channel))
			}
			unlock(t, "the waiter", r.lk)
		})
	}
}

// describeNodes says, for a failure's message, what each master holds
// under key (its type and PTTL) and how many subscribers channel has there.
func describeNodes(t *testing.T, nodes []redlock.Node, key, channel string) string {
	var b strings.Builder
	for i, n := range nodes {
		typ, _ := n.Do(ctx(t), "TYPE", key)
		pttl, _ := n.Do(ctx(t), "PTTL", key)
		subs, _ := n.Do(ctx(t), "PUBSUB", "NUMSUB", channel)
		fmt.Fprintf(&b, "master %d: %v pttl %v, subscribers %v; ", i, typ, pttl, subs)
	}
	return b.String()
}
