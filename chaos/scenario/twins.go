package scenario

import (
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
)

// protections are the protected twins of the unsafe scenarios, and the
// unsafe scenarios of the protections that came with them: each
// protection of the library is proven by one scenario that shows the
// overlap without it and its twin that shows none with it (issue 23).
// restart-unsafe's twins are restart-guarded and restart-guarded-acquired
// (the guard learns the longest TTL from an Extend, and from an acquire);
// restart-everysec and failover-async are unsafe, their twins
// restart-everysec-durable and failover-replicated.
func protections() []Scenario {
	return []Scenario{
		{
			Name:        "restart-guarded",
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across restart-unsafe's restart (no persistence, no delay) with the restart guard on: the default guard for a client that saw the master before, the strict one (RestartGuard = the longest TTL) for a client that first meets it after; the clients take 2s locks and extend them to 5s (a guard blind to Extends would pass 2-3s after the restart: 2s before A's lock expires), and B tries until A's extended lock expires",
			Expect:      "0 overlaps: the restarted master's grants do not count until it has been up for the longest TTL, Extends included; both clients get the lock after A released",
			run:         shared{ttl: 2 * time.Second, extendTo: 5 * time.Second, disrupt: restartAtOnce, warm: true, strict: true}.run,
		},
		{
			Name:        "restart-guarded-acquired",
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across restart-guarded's restart with the default guard, where B's longest TTL comes from an acquire only: B's warm-up lock is taken for 4s and not extended; A takes a 2s lock and extends it to 4s, and B tries until A's extended lock expires",
			Expect:      "0 overlaps: the restarted master's grants do not count until it has been up for the longest TTL B acquired with; B gets the lock after A released",
			run:         shared{ttl: 2 * time.Second, extendTo: 4 * time.Second, warmFor: 4 * time.Second, disrupt: restartAtOnce, warm: true}.run,
		},
		{
			Name:        "restart-everysec",
			Unsafe:      true,
			Persistence: cluster.PersistenceEverysec,
			Invariant:   "mutual exclusion across a power loss of the master two quorums share, on masters with AOF and appendfsync everysec, at the instant it granted the lock, before its next fsync; restarted at once; restart guard off (RestartGuard -1); WAITAOF server (Valkey or Redis 7.2+)",
			Expect:      "overlap produced and detected: the master came back without the grant, which counted; restart-everysec-durable is the same with durable grants",
			run:         everysec{}.run,
		},
		{
			Name:        "restart-everysec-durable",
			Persistence: cluster.PersistenceEverysec,
			Invariant:   "mutual exclusion across restart-everysec's power loss with Config.Durability{Local: true}: a grant counts only once WAITAOF confirmed it on the master's disk (guard off as in restart-everysec)",
			Expect:      "0 overlaps: the grant lost with the power was never confirmed, so A's first attempt failed and A locked again on the restarted master; B gets the lock after A released",
			run:         everysec{durable: true}.run,
		},
		{
			Name:        "failover-async",
			Unsafe:      true,
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across a Sentinel failover of the master two quorums share, to its replica whose link lags, right after the grant; clients reach it through the go-redis adapter over redis.NewFailoverClient; restart guard off (RestartGuard -1)",
			Expect:      "overlap produced and detected: the promoted replica never had the first lock; failover-replicated is the same with Durability{Replicas: 1}",
			run:         failover{}.run,
		},
		{
			Name:        "failover-replicated",
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across failover-async's failover with Config.Durability{Replicas: 1}: a grant counts only once a replica acknowledged it (WAIT); unsafe still: a replica that restarts empty and is promoted, a failover to a replica that did not acknowledge",
			Expect:      "0 overlaps: A's grants counted only once the lagging replica had them, so the promoted replica holds A's lock; B gets it after A released",
			run:         failover{durable: true}.run,
		},
	}
}
