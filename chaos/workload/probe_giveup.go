package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
)

// giveUp runs the blocked calls bs of client A (kind_blocked.go) as Locks
// that give up, with A's link to master 0 slower than the node timeout:
// a waiting Lock's wake-on-release subscription there takes that long,
// and the call's context ends while it waits for it (in the first round;
// later rounds give up later). Master 0 may keep what the call wrote
// there (its release times out); no other master may.
func (p *prober) giveUp(ctx context.Context, bs ...blocked) error {
	if err := p.links(ctx, p.a, fault.Slow, probeSlow, 0); err != nil {
		return err
	}
	wait := NodeTimeout/2 + NodeTimeout*time.Duration(p.round)
	for _, b := range bs {
		if err := p.a.blockedCycle(ctx, ctx, b, p.name+"."+string(b), false, wait); err != nil {
			p.heal(ctx, p.a)
			return err
		}
	}
	return p.heal(ctx, p.a)
}
