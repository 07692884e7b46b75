package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
)

// lateAcquireDelay is how late LateAcquire's acquire reaches its master:
// past the pipelined connection's stall timeout (pool.DefaultStallTimeout,
// 1s), after which the Node reaches the master over a new connection.
const lateAcquireDelay = 2500 * time.Millisecond

// lateAcquire is the LateAcquire probe. A's requests to master 0 are
// delayed by lateAcquireDelay on the connections open now; A's TryLock is
// granted by the other masters. Once A's Node reaches master 0 again
// without the delay (a new connection: awaited with PINGs), A unlocks: the
// release reaches master 0 before the acquire it undoes, which lands
// later. The acquire must change nothing there (the release left a
// tombstone), not hold the key for its TTL. Where the transport sends the
// release on the delayed connection (behind the acquire), it lands after
// it and deletes the key: nothing to see, and nothing wrong.
func (p *prober) lateAcquire(ctx context.Context) error {
	key := p.e.Key(p.name)
	const slow = 0 // one master: a minority
	// Healed once the call returned: what was delayed keeps its time;
	// what A sends from now on is not.
	h, start, err, herr := p.tryUnder(ctx, key, fault.DelayRequests, lateAcquireDelay, slow)
	if herr != nil {
		return herr
	}
	if err != nil {
		return harness(err)
	}
	p.reachedAgain(ctx, slow, start.Add(lateAcquireDelay))
	p.unlock(ctx, h, "unlock of a lock whose acquire reached one master late")
	p.goneWhileSlow(ctx, h, slow, start, start.Add(lateAcquireDelay+SettleWithin/2),
		"the acquire reached the master after its release, and set the key")
	return nil
}

// reachedAgain waits until client A's Node answers a PING from master j
// within a node timeout (it reaches j over a connection that is not
// delayed), or until by.
func (p *prober) reachedAgain(ctx context.Context, j int, by time.Time) {
	for time.Now().Before(by) && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, NodeTimeout)
		_, err := p.e.nodes[p.a.ID][j].Do(pctx, "PING")
		cancel()
		if err == nil {
			return
		}
	}
}
