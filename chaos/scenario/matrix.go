package scenario

import (
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// The restart matrix: restart-guarded's restart (a master two quorums
// share, restarted at once without persistence, the default guard)
// through every entry point and every process lifetime users run: each
// Node type of the repository (A and B over it), and B long-lived (it met
// the master before the restart), a fresh process (started after it), or a
// process per attempt (each TryLock in a process of its own, as "redlock
// run" is). The guard must hold the restarted master back for every one
// of them (issue 29: it held only where the chaos suite looked, a
// long-lived process that watched the restart). restart-aof-after is the
// restart with the master's persistence changed to appendfsync always (it
// comes back empty all the same).

// matrixTTL is the matrix's TTL: the guard holds a restarted master back
// that long (and a second), and B tries for as long as A's lock is valid.
const matrixTTL = 2 * time.Second

// lifetimes are the process lifetimes of the matrix.
var lifetimes = []lifetime{longLived, freshProcess, perLock}

// matrix returns the restart matrix's scenarios.
func matrix() []Scenario {
	var out []Scenario
	for _, t := range workload.Transports {
		for _, life := range lifetimes {
			out = append(out, Scenario{
				Name:        fmt.Sprintf("restart-%s-%s", t, life),
				Persistence: cluster.PersistenceNone,
				Invariant:   fmt.Sprintf("restart-guarded's restart (no persistence, no delay, default guard) with A and B over %s, and B %s", t, lifeText[life]),
				Expect:      "0 overlaps: the restarted master's grants do not count until it has been up for the TTL; B gets the lock after A released",
				Driven:      &Driven{Transport: t, Lifetime: string(life)},
				run:         shared{ttl: matrixTTL, disrupt: restartAtOnce, warm: life == longLived, transport: t, life: life}.run,
			})
		}
	}
	for _, t := range workload.Transports {
		if t == workload.Pipelined {
			continue // restart-everysec-durable itself
		}
		out = append(out, Scenario{
			Name:        "restart-everysec-durable-" + string(t),
			Persistence: cluster.PersistenceEverysec,
			Invariant:   fmt.Sprintf("restart-everysec-durable (a power loss of the shared master at the instant it granted, Durability{Local: true}) with A and B over %s", t),
			Expect:      "0 overlaps: the lost grant was never confirmed (the restarted process's confirmation fails, nodeutil.ErrMasterChanged); B gets the lock after A released",
			Driven:      &Driven{Transport: t, Lifetime: string(longLived)},
			run:         everysec{durable: true, transport: t}.run,
		})
	}
	for _, t := range []workload.Transport{workload.Rueidis, workload.ValkeyGo} {
		out = append(out, Scenario{
			Name:        "failover-replicated-" + string(t),
			Persistence: cluster.PersistenceNone,
			Invariant:   fmt.Sprintf("failover-replicated (a Sentinel failover of the shared master to its lagging replica, Durability{Replicas: 1}) through %s's Sentinel client (failover-replicated itself goes through go-redis's; a pool.Node follows no failover)", t),
			Expect:      "0 overlaps: A's grants counted only once the lagging replica had them; B gets the lock after A released",
			Driven:      &Driven{Transport: t, Lifetime: string(longLived)},
			run:         failover{durable: true, transport: t}.run,
		})
	}
	out = append(out, Scenario{
		Name:        "restart-first-lock-partitioned",
		Persistence: cluster.PersistenceNone,
		Invariant:   "restart-guarded's restart where A's lock is the deployment's first, taken while A reaches masters 0-2 only (no client ever reached masters 3 and 4); B, a process started after the restart, reads masters 2-4, none with a record",
		Expect:      "0 overlaps: B read too few masters to take the deployment for a fresh one (N-Q+1 of the others), and holds the restarted master back for the TTL it uses",
		Driven:      &Driven{Transport: workload.Pipelined, Lifetime: string(freshProcess)},
		run:         shared{ttl: matrixTTL, disrupt: restartAtOnce, life: freshProcess, unregistered: true}.run,
	})
	return append(out, Scenario{
		Name:        "restart-aof-after",
		Persistence: cluster.PersistenceNone,
		Invariant:   "restart-guarded's restart where the master, which ran without AOF, comes back with AOF and appendfsync always (the doctor's advice), empty all the same; B a fresh process",
		Expect:      "0 overlaps: its persistence now does not make the master keep what it lost; it is held back for the TTL",
		Driven:      &Driven{Transport: workload.Pipelined, Lifetime: string(freshProcess)},
		run:         shared{ttl: matrixTTL, disrupt: restartAtOnce, life: freshProcess, aofAfter: true}.run,
	})
}

// lifeText describes B's lifetime in a scenario's invariant.
var lifeText = map[lifetime]string{
	longLived:    "long-lived (it locked on the master before the restart)",
	freshProcess: "a process started after the restart",
	perLock:      "a process per attempt (each TryLock in a process of its own, closed after it)",
}
