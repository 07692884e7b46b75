package workload

import (
	"context"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// renewHeldTTL is the TTL of the RenewHeld probe's locks, which run for
// three of them.
const renewHeldTTL = 2 * NodeTimeout

func (p *prober) renewHeld(ctx context.Context) error {
	key := p.e.Key(p.name)
	h, err := p.a.record(checker.Event{Key: p.name, Renewed: true, TTL: renewHeldTTL}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return p.a.renew.TryLock(ctx, key, renewHeldTTL) })
	if err != nil {
		return harness(err)
	}
	lctx, stop := p.a.watch(h)
	p.a.workUntil(ctx, h, lctx, 3*renewHeldTTL, renewHeldTTL/4)
	stop()
	p.unlock(ctx, h, "unlock of a renewed lock")
	dctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	defer cancel()
	if err := p.b.do(dctx, p.name+"-do", renewHeldTTL, 3*renewHeldTTL); err != nil {
		if herr := harness(err); herr != nil {
			return herr
		}
	}
	return nil
}
