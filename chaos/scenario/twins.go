package scenario

import (
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
)

// protections are the protected twins of the unsafe scenarios, and the
// unsafe scenarios of the protections that came with them: each
// protection of the library is proven by one scenario that shows the
// overlap without it and its twin that shows none with it (issue 23).
// restart-unsafe's twin is restart-guarded; restart-everysec and
// failover-async are unsafe, their twins restart-everysec-durable and
// failover-replicated.
func protections() []Scenario {
	return []Scenario{
		{
			Name:        "restart-guarded",
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across restart-unsafe's restart (no persistence, no delay) with the restart guard on: the default guard for a client that saw the master before, the strict one (RestartGuard = the longest TTL) for a client that first meets it after",
			Expect:      "0 overlaps: the restarted master's grants do not count until it has been up for the TTL; both clients get the lock after A released",
			run:         shared{ttl: 2 * time.Second, disrupt: restartAtOnce, warm: true, strict: true}.run,
		},
	}
}
