package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"

	goredisnode "github.com/quorumlock/quorumlock/adapters/goredis"
	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// failover is the body of failover-async and its twin: restart-unsafe's
// shared master, replicated behind Sentinel (cluster.StartReplicated).
// Every master has a replica; master 2's replica lags 1.5s behind it, and
// a Sentinel watches master 2. The clients reach master 2 as a Sentinel
// user does, through the go-redis adapter over redis.NewFailoverClient,
// and the other masters through their proxies. A locks; the instant A's
// Lock returns, master 2 dies (SIGKILL) with the grant still on its way to
// the lagging replica, which Sentinel promotes (2-4s); the old
// master comes back as a replica of the new one; B tries. Without
// durability (failover-async) the promoted replica never had A's lock: B
// gets it while A holds it. With Durability{Replicas: 1}
// (failover-replicated) a grant counts only once a replica acknowledged
// it: while the lag outlasts the confirmation's second (confirmTimeout), master 2's grants do not
// count; once A's first confirmation came back short, the lag ends, A's
// next grant reaches the replica and counts, and the promoted replica
// holds A's lock. The restart guard is off in both (RestartGuard -1): the
// replicas here are seconds old, and the default guard would hold a
// promoted replica back as a restarted master (a production replica's
// uptime passes it at once).
//
// What durability leaves unsafe is not shown here: a replica that
// restarts empty after it acknowledged, and is promoted; a failover to a
// replica that did not acknowledge (Replicas below the number of
// replicas).
type failover struct {
	durable bool
	// transport is the Node type over the Sentinel-aware client of master
	// 2: goredis (the default), rueidis or valkeygo; the other masters are
	// reached as the Env's transport mix does.
	transport workload.Transport
}

// replicationLag is how far master 2's replica lags: past the second for
// which a confirmation waits (confirmTimeout, WAIT's timeout), so that a
// grant's first confirmation comes back short.
const replicationLag = 1500 * time.Millisecond

// confirmTimeout is failover-replicated's Durability.Timeout.
const confirmTimeout = time.Second

func (s failover) locker(int) redlock.Config {
	cfg := workload.LockerConfig(workload.NodeTimeout)
	cfg.RestartGuard = -1
	if s.durable {
		cfg.Durability = redlock.Durability{Replicas: 1, Timeout: confirmTimeout}
	}
	return cfg
}

// sentinelNodes are the clients' Nodes of the Sentinel-watched master: an
// adapter over a Sentinel-aware client each (the pool.Node follows no
// failover).
type sentinelNodes struct {
	transport workload.Transport
	mu        sync.Mutex
	closers   []func()
}

// node returns a Node over a new Sentinel-aware client of the master set
// that Sentinel at addr watches.
func (sn *sentinelNodes) node(addr, name string) redlock.Node {
	var (
		n     redlock.Node
		close func()
	)
	switch sn.transport {
	case workload.Rueidis:
		rn, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{addr}, Sentinel: rueidis.SentinelOption{MasterSet: name}, DisableCache: true})
		if err != nil {
			panic(err) // Open refuses only unsafe options
		}
		n, close = rn, func() { rn.Close() }
	case workload.ValkeyGo:
		vn, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{addr}, Sentinel: valkey.SentinelOption{MasterSet: name}, DisableCache: true})
		if err != nil {
			panic(err)
		}
		n, close = vn, func() { vn.Close() }
	default:
		c := goredis.NewFailoverClient(&goredis.FailoverOptions{MasterName: name, SentinelAddrs: []string{addr}})
		gn, err := goredisnode.New(c)
		if err != nil { // New refuses only rings and cluster clients
			panic(err)
		}
		n, close = gn, func() { gn.Close(); c.Close() }
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.closers = append(sn.closers, close)
	return n
}

// close closes every Node and client.
func (sn *sentinelNodes) close() {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	for _, c := range sn.closers {
		c()
	}
}

func (s failover) run(ctx context.Context, r *Run) error {
	if r.opts.Backend != cluster.BackendLocal {
		return fmt.Errorf("%w: replicated masters behind Sentinel need the local backend", cluster.ErrUnsupported)
	}
	var (
		rc   *cluster.Replicated
		sn   = sentinelNodes{transport: s.transport}
		heal sync.Once
	)
	defer sn.close()
	e, err := r.EnvOn(ctx, func(ctx context.Context) (cluster.Cluster, error) {
		var err error
		rc, err = cluster.StartReplicated(ctx, cluster.ReplicatedConfig{
			Config:  cluster.Config{Nodes: Nodes, Persistence: cluster.PersistenceNone, Server: r.opts.Server},
			Watched: 2,
		})
		return rc, err
	}, workload.EnvConfig{Clients: 2, Locker: s.locker, Wrap: func(c, i int, n redlock.Node) redlock.Node {
		if i != 2 {
			return n
		}
		fn := sn.node(rc.SentinelAddr(), rc.MasterName())
		if c != 0 {
			return fn
		}
		// A's first confirmation by master 2 that comes back short ends
		// the lag, so that its next grant reaches the replica.
		return &grantNode{Node: fn, confirmed: func(_, replicas int, _ error) {
			if replicas < 1 {
				heal.Do(rc.HealLag)
			}
		}}
	}})
	if err != nil {
		return err
	}
	a, b := e.Client(0), e.Client(1)
	if err := r.Apply(ctx, cuts(2)...); err != nil {
		return err
	}
	if err := rc.Lag(replicationLag); err != nil {
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ha, err := a.Acquire(actx, "k", everysecTTL, false)
	cancel()
	if err != nil {
		return fmt.Errorf("scenario: client A could not lock on masters 0-2: %w", err)
	}
	start := e.Now()
	if err := rc.Crash(ctx); err != nil {
		return err
	}
	_, had, err := cluster.Get(ctx, rc.Replica(2), e.Key("k"))
	if err != nil {
		return err
	}
	r.Logf("A granted on redis-0..2 (token %d); redis-2 killed at once; its replica had A's lock: %t", ha.Token, had)
	addr, err := rc.AwaitFailover(ctx)
	if err != nil {
		return err
	}
	e.Faults.Record(fault.Fault{Kind: fault.Kill, Node: 2}, start, e.Now(),
		fmt.Sprintf("master killed while its replica lagged %v; Sentinel promoted the replica %s", replicationLag, addr))
	r.Logf("Sentinel promoted %s after %v", addr, (e.Now() - start).Round(time.Millisecond))
	if err := rc.Rejoin(ctx, addr); err != nil {
		return err
	}
	hb, bWhileA, _, last := contend(ctx, r, b, ha, everysecTTL, time.Second, 10*time.Second)
	if hb == nil {
		r.Logf("B: %s", errText(last))
	}
	if judge(r, bWhileA) {
		r.Check("the promoted replica lacked A's lock", !had, "the replica had it: %t", had)
		return nil
	}
	r.Check("A's lock counted only once the replica had it", had, "the replica had it: %t", had)
	r.Check("B acquires", hb != nil, "")
	return nil
}
