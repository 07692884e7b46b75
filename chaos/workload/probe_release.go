package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// retriedWithin bounds how long after its link healed a release that
// failed on a master may take to be sent again and run there: past the
// first few retries' backoff (redlock/retry.go: a node timeout, doubled
// each time), far short of the probe's TTL.
const retriedWithin = 2 * time.Second

// releaseRetried is the ReleaseRetried probe. A holds a lock (5s); its
// link to master 0 is cut, so that the Unlock's release there gets no
// answer, then reset (the release is dropped unrun) and healed. A failed
// release is sent again until answered: master 0 must lose the key within
// retriedWithin of the heal, long before its TTL. nothing-left excuses a
// master to which a release failed, since it may not have run; what
// happens next is this probe's to check.
func (p *prober) releaseRetried(ctx context.Context) error {
	key := p.e.Key(p.name)
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	if err := p.links(ctx, p.a, fault.Cut, 0, 0); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	h.releaseWith(rctx)
	cancel()
	for _, k := range []fault.Kind{fault.Reset, fault.Heal} {
		if err := p.links(ctx, p.a, k, 0, 0); err != nil {
			return err
		}
	}
	healed := time.Now()
	for ctx.Err() == nil {
		if r := p.e.direct.read(ctx, h.target)[0]; r.known && !r.held {
			return nil
		}
		if time.Since(healed) > retriedWithin {
			p.e.History.Remain(p.a.ID, h.name, time.Now(), fmt.Sprintf(
				"an Unlock whose release to master 0 failed (its link cut, then reset): master 0 still holds %s %v after the link healed; a failed release must be sent again",
				key, retriedWithin))
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}
