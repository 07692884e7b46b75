package workload_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestEndAtRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, cancel := workload.EndAtRandom(context.Background(), rng, 1, 50*time.Millisecond)
	defer cancel()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a context drawn to end within 50ms has not ended after 10s")
	}
	if !errors.Is(ctx.Err(), context.Canceled) || !errors.Is(context.Cause(ctx), workload.ErrEndedAtRandom) {
		t.Errorf("Err %v, cause %v", ctx.Err(), context.Cause(ctx))
	}

	never, cancel := workload.EndAtRandom(context.Background(), rng, 0, time.Millisecond)
	if never.Err() != nil {
		t.Errorf("a context drawn not to end ended: %v", never.Err())
	}
	cancel()
	if !errors.Is(never.Err(), context.Canceled) || errors.Is(context.Cause(never), workload.ErrEndedAtRandom) {
		t.Errorf("after its cancel: Err %v, cause %v", never.Err(), context.Cause(never))
	}
}

// TestEndAtRandomOnRealMasters checks the helper in the calls it is for,
// on real masters: a Lock waiting for a held key (its attempts and the
// waits between them) ends when its context ends at a random point, with
// an error that matches both context.Canceled and redlock.ErrNotAcquired;
// an Unlock whose context ends at a random point still releases the lock
// on every master.
func TestEndAtRandomOnRealMasters(t *testing.T) {
	e := newEnv(t, 2)
	key := e.Key("k")
	bg := context.Background()
	held, err := e.Client(0).Locker.Lock(bg, key, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 5 {
		ctx, cancel := workload.EndAtRandom(bg, rng, 1, 4*workload.NodeTimeout)
		lk, err := e.Client(1).Locker.Lock(ctx, key, time.Second)
		cancel()
		if err == nil {
			lk.Unlock(bg)
			t.Fatal("Lock of a held key granted")
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, redlock.ErrNotAcquired) {
			t.Errorf("Lock whose context ended at random: %v, want context.Canceled and ErrNotAcquired", err)
		}
	}
	ctx, cancel := workload.EndAtRandom(bg, rng, 1, time.Millisecond)
	<-ctx.Done() // ended before the call: the releases must still go out
	err = held.Unlock(ctx)
	cancel()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Unlock with a context that ended: %v", err)
	}
	if left, err := e.AwaitNoKeys(bg, 3*time.Second); err != nil || left != 0 {
		t.Errorf("%d keys left after an Unlock whose context ended (%v)", left, err)
	}
}
