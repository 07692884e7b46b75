package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// fenceAheadBy is how far master 0's fencing counter is set ahead of its
// clock in the fence-ahead probe: a master whose clock runs that far ahead
// raises its counter so (fence_acquire.lua).
const fenceAheadBy = time.Minute

// fenceAhead is the FenceAhead probe. The masters of a chaos run share one
// clock, so that the time a fencing counter is raised to never goes back,
// and the write-back of a quorum's token to its masters would never show:
// master 0's counter is set as a master whose clock runs ahead leaves it.
// Then a fenced lock is granted by masters 0 to q-1, a bare quorum
// (client A's links to the others slower than the node timeout), and
// released; then by masters 1 to q (the links to the others slow). The
// second token must be above the first (checker.FenceIncreases): masters
// 1 to q-1 carry the first quorum's token into the second only when it was
// written back.
func (p *prober) fenceAhead(ctx context.Context) error {
	key := p.e.Key(p.name)
	err := p.e.direct.on(ctx, 0, func(ctx context.Context, c redis.Conn) error {
		t, err := redis.Int64s(redis.DoContext(c, ctx, "TIME"))
		if err != nil {
			return err
		}
		ahead := t[0]*1_000_000 + t[1] + fenceAheadBy.Microseconds()
		_, err = redis.DoContext(c, ctx, "SET", layout.Fence(key), ahead, "PX", (2 * fenceAheadBy).Milliseconds())
		return err
	})
	if err != nil {
		return fmt.Errorf("fence-ahead: set master 0's counter: %w", err)
	}
	n, q := len(p.e.nodes[p.a.ID]), p.e.quorum
	for first := range 2 { // the quorum: masters first to first+q-1
		var slow []int
		for j := range n {
			if j < first || j >= first+q {
				slow = append(slow, j)
			}
		}
		if err := p.links(ctx, p.a, fault.Slow, probeSlow, slow...); err != nil {
			return err
		}
		h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.Locker.TryLock(ctx, key, probeTTL) })
		if err != nil {
			if herr := p.heal(ctx, p.a); herr != nil {
				return herr
			}
			return harness(err)
		}
		p.unlock(ctx, h, fmt.Sprintf("unlock of a fenced lock granted without masters %v", slow))
		if err := p.heal(ctx, p.a); err != nil {
			return err
		}
		// The slow master's late acquire and its release land; the next
		// round needs the key free on every master.
		p.e.awaitDelivered(ctx, p.a.ID)
		for deadline := time.Now().Add(SettleWithin); holding(p.e.direct.read(ctx, h.target)) > 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil // recorded as a lock left behind by the checkers
			}
		}
	}
	return nil
}
