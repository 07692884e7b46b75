package world_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/sim/master"
	"github.com/quorumlock/quorumlock/sim/world"
)

func newWorld(n, clients int) *world.World {
	cfg := world.Config{Clients: clients, Delay: world.Range{Min: 100 * time.Microsecond, Max: 2 * time.Millisecond}, Seed: 1}
	for range n {
		cfg.Masters = append(cfg.Masters, world.MasterConfig{Persist: master.Persistence{AppendOnly: true, Fsync: "everysec"}, ClockRate: 1, ReplicaLag: -1})
	}
	return world.New(cfg, time.Now())
}

func TestLockUnlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(5, 2)
		w.Run()
		defer w.Stop()
		a, err := redlock.New(w.Nodes(0), redlock.Config{Fencing: true})
		if err != nil {
			t.Fatal(err)
		}
		b, err := redlock.New(w.Nodes(1), redlock.Config{Fencing: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		lk, err := a.Lock(ctx, "k", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("fence %d until %v", lk.Fence(), time.Until(lk.Until()))
		if _, err := b.TryLock(ctx, "k", time.Second); err == nil {
			t.Fatal("b got a held lock")
		}
		start := time.Now()
		go func() {
			time.Sleep(300 * time.Millisecond)
			lk.Unlock(ctx)
		}()
		lk2, err := b.Lock(ctx, "k", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("b waited %v, fence %d", time.Since(start), lk2.Fence())
		if lk2.Fence() <= lk.Fence() {
			t.Fatal("fence did not increase")
		}
		if err := lk2.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		a.Close(ctx)
		b.Close(ctx)
	})
}
