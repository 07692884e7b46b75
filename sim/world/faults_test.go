package world_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/sim/world"
)

// TestCutHoldsThenDelivers checks a partition that holds: the command
// runs once it heals (after the Node gave up on it), as TCP delivers.
func TestCutHoldsThenDelivers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(1, 1)
		w.Run()
		defer w.Stop()
		n := w.Node(0, 0)
		w.Link(world.LinkFault{Clients: []int{0}, Masters: []int{0}, For: 3 * time.Second, ToMaster: true, ToClient: true, Cut: true})
		ran := make(chan time.Time, 1)
		start := time.Now()
		w.OnExec = func(e world.Exec) { ran <- e.At }
		_, err := n.Do(context.Background(), "SET", "k", "v")
		if !errors.Is(err, world.ErrStall) || time.Since(start) != time.Second {
			t.Fatalf("err %v after %v, want the stall timeout after 1s", err, time.Since(start))
		}
		at := <-ran
		if at.Sub(start) < 3*time.Second {
			t.Fatalf("ran at %v, before the cut healed", at.Sub(start))
		}
	})
}

// TestCrashRefusesThenRestarts checks that a crashed master refuses
// commands, comes back as a new process, and that the Node learns it.
func TestCrashRefusesThenRestarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(1, 1)
		w.Run()
		defer w.Stop()
		n := w.Node(0, 0)
		ctx := context.Background()
		if _, err := n.Do(ctx, "PING"); err != nil {
			t.Fatal(err)
		}
		before, err := n.Abilities().Identity()
		if err != nil {
			t.Fatal(err)
		}
		w.Crash(0, time.Second, nil)
		if _, err := n.Do(ctx, "PING"); !errors.Is(err, world.ErrRefused) {
			t.Fatalf("err %v, want refused", err)
		}
		time.Sleep(time.Second)
		if _, err := n.Do(ctx, "PING"); err != nil {
			t.Fatal(err)
		}
		after, _ := n.Abilities().Identity()
		if after.RunID == before.RunID || !after.Started.After(before.Started) {
			t.Fatalf("identity %+v after a restart, was %+v", after, before)
		}
	})
}
