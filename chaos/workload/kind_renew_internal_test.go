package workload

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// A holder that sees its lock's context end and stops watching at once
// races the context's AfterFunc (a context closes Done before it runs
// them): the loss must be recorded whichever wins. Before watchCtx noted
// the end on its stop path too, about 3% of these losses went unrecorded
// under -race (it failed TestProbesHoldOnTheLibrary in CI).
func TestWatchCtxRecordsLossWhenStopWins(t *testing.T) {
	const n = 5000
	c := &Client{env: &Env{History: checker.NewHistory(time.Now())}}
	lost := fmt.Errorf("a renewal found it gone: %w", redlock.ErrLockLost)
	for id := int64(1); id <= n; id++ {
		ctx, cancel := context.WithCancelCause(context.Background())
		stop := c.watchCtx(id, ctx)
		go cancel(lost)
		<-ctx.Done()
		stop()
	}
	got := map[checker.Kind]int{}
	for _, ev := range c.env.History.Events() {
		got[ev.Kind]++
	}
	if got[checker.Lost] != n || got[checker.CtxLive] != n {
		t.Fatalf("%d losses and %d context ends recorded of %d lost locks", got[checker.Lost], got[checker.CtxLive], n)
	}
}

// A context that ends for another reason (the holder's own cancel) is
// noted as ended, not lost, on either path.
func TestWatchCtxNoLossOnCancel(t *testing.T) {
	c := &Client{env: &Env{History: checker.NewHistory(time.Now())}}
	ctx, cancel := context.WithCancel(context.Background())
	stop := c.watchCtx(1, ctx)
	cancel()
	<-ctx.Done()
	stop()
	for _, ev := range c.env.History.Events() {
		if ev.Kind == checker.Lost {
			t.Fatalf("a cancelled context recorded as lost: %+v", ev)
		}
	}
}
