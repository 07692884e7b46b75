package redlock_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// dropsReleases is a master whose client loses its first n release calls
// before sending them (a connection closed under a command still queued):
// the call fails, and nothing ran.
// Its abilities are the pool.Node's but EvalAsync, so that every call
// goes through EvalPrepared.
type dropsReleases struct {
	n    *pool.Node
	left atomic.Int32
}

func (d *dropsReleases) Addr() string { return d.n.Addr() }

func (d *dropsReleases) Abilities() redlock.Abilities {
	a := d.n.Abilities()
	a.EvalPrepared, a.EvalAsync = d.EvalPrepared, nil
	return a
}

func (d *dropsReleases) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return d.n.Do(ctx, cmd, args...)
}

func (d *dropsReleases) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return d.n.Eval(ctx, hash, src, keys, args...)
}

func (d *dropsReleases) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	if strings.Contains(src, "'DEL'") && d.left.Add(-1) >= 0 {
		return nil, errors.New("connection closed before the command was written")
	}
	return d.n.EvalPrepared(ctx, src, cmdArgs)
}

// A release whose call failed is sent again: it is idempotent, and the
// lock must not stay on that master until its TTL. Unlock and a failed
// attempt's clean-up alike.
func TestFailedReleaseIsRetried(t *testing.T) {
	_, nodes := cluster(t, 3)
	lossy := &dropsReleases{n: nodes[2]}
	l := newLocker(t, []redlock.Node{nodes[0], nodes[1], lossy}, redlock.Config{})
	ctx := t.Context()

	lossy.left.Store(2)
	lk, err := l.TryLock(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "k", "", "", "") // the third master's release, twice lost, went again

	// A failed attempt: masters 0 and 1 are held by someone else.
	for _, n := range nodes[:2] {
		if _, err := n.Do(ctx, "SET", "f", "other", "PX", 60000); err != nil {
			t.Fatal(err)
		}
	}
	lossy.left.Store(1)
	if _, err := l.TryLock(ctx, "f", time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("TryLock against two held masters: %v", err)
	}
	awaitValues(t, nodes, "f", "other", "other", "")
	if lossy.left.Load() >= 0 {
		t.Fatal("the test dropped no release")
	}
}

// A release is retried for as long as the key may live: after an Extend
// to a longer TTL, the lock's own TTL is not that (a release lost while
// the key lives on for the extended TTL would otherwise stop being sent
// after the first TTL, and the key outlive its Unlock).
func TestReleaseRetriedForTheExtendedTTL(t *testing.T) {
	_, nodes := cluster(t, 3)
	lossy := &dropsReleases{n: nodes[2]}
	// Two releases lost: the second retry goes out two seconds after the
	// Unlock (a node timeout, then a second), past the lock's own TTL,
	// within the extended one.
	l := newLocker(t, []redlock.Node{nodes[0], nodes[1], lossy}, redlock.Config{NodeTimeout: time.Second})
	ctx := t.Context()
	lk, err := l.TryLock(ctx, "x", 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Extend(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	lossy.left.Store(2)
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "x", "", "", "")
}
