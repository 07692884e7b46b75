package workload

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/redlock"
)

// EnvConfig configures the clients of an Env.
type EnvConfig struct {
	// Clients is the number of clients; 0 means 1.
	Clients int
	// Locker returns the configuration of client i's Locker; nil means
	// LockerConfig(NodeTimeout) for every client.
	Locker func(client int) redlock.Config
	// Wrap, if set, wraps the node client i reaches node j through, e.g. to
	// delay its replies.
	Wrap func(client, node int, n redlock.Node) redlock.Node
	// Transport, if set, is how client i reaches the masters; nil means
	// Pipelined (or Pooled where Pooled says so). Options of the
	// transport (the adapters' timeouts) are drawn from Seed.
	Transport func(client int) Transport
	// Pooled, if set (and Transport is not), reports whether client i
	// reaches the masters in the Pooled mode (pool.Config.Pooled: a
	// connection per concurrent call) instead of through one pipelined
	// connection per master.
	Pooled func(client int) bool
	// Seed draws the transports' options.
	Seed uint64
}

// transport is the transport of client i.
func (cfg EnvConfig) transport(i int) Transport {
	switch {
	case cfg.Transport != nil:
		return cfg.Transport(i)
	case cfg.Pooled != nil && cfg.Pooled(i):
		return Pooled
	}
	return Pipelined
}

// NodeTimeout is the per-master timeout of the clients unless EnvConfig.Locker
// says otherwise. It is larger than the library's default (50ms) so that a
// loaded test machine (two cores, the race detector, Docker) does not become
// a fault of its own; the faults are the harness's to inject. It is not much
// larger because a contended attempt that got some votes holds them until a
// frozen master's timeout tells it that it failed, and those partial holds
// make the other clients fail in turn.
const NodeTimeout = 100 * time.Millisecond

// LockerConfig is the configuration of the harness's clients, with
// per-master timeout nodeTimeout. Scenarios that need another one start from
// it.
func LockerConfig(nodeTimeout time.Duration) redlock.Config {
	return redlock.Config{NodeTimeout: nodeTimeout, Fencing: true}
}

// Env is one chaos run: a cluster, a proxy between every client and every
// node, the clients, and what they did, on one timeline.
type Env struct {
	Cluster cluster.Cluster
	Net     *netfault.Net
	History *checker.History
	Faults  *fault.Injector

	prefix  string
	clients []*Client
	dialers []*dialer        // dialers[c]: client c's transport
	nodes   [][]redlock.Node // nodes[c][j]: client c's node of master j
	closers []func() error   // of every node
	direct  *masters         // the harness's own connections, past the proxies
	quorum  int
	pending sync.WaitGroup // samples still to be recorded

	mu        sync.Mutex
	resources map[string]*checker.Resource

	attempts atomic.Int64
	late     atomic.Int64 // writes made after the writer's Until
}

// NewEnv puts proxies in front of the nodes of c and creates the clients. The
// timeline starts now. Close releases the proxies and connections (not the
// cluster). From then on, the library's interleaving points stretch (see
// stretch.go), in the whole process.
func NewEnv(c cluster.Cluster, cfg EnvConfig) (*Env, error) {
	stretchPoints()
	if cfg.Clients <= 0 {
		cfg.Clients = 1
	}
	net, err := netfault.New(cluster.Addrs(c), cfg.Clients)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 4)
	rand.Read(id)
	base := time.Now()
	e := &Env{
		Cluster:   c,
		Net:       net,
		History:   checker.NewHistory(base),
		Faults:    fault.NewInjector(c, net, base),
		prefix:    "chaos:" + hex.EncodeToString(id) + ":",
		resources: map[string]*checker.Resource{},
	}
	e.direct = newMasters(c)
	e.quorum = len(c.Nodes())/2 + 1
	// The injector's Multi fault sends its command through a client's own
	// shared connection, as an application would.
	e.Faults.SendCommand = func(ctx context.Context, client, node int, cmd string, args ...any) error {
		_, err := e.nodes[client][node].Do(ctx, cmd, args...)
		return err
	}
	rng := optionsRNG(cfg.Seed)
	for i := range cfg.Clients {
		var nodes []redlock.Node
		e.nodes = append(e.nodes, nil)
		d := newDialer(cfg.transport(i), c.Password(), rng)
		e.dialers = append(e.dialers, d)
		for j, addr := range net.Addrs(i) {
			mn, err := d.dial(addr)
			if err != nil {
				e.Close()
				return nil, err
			}
			e.closers = append(e.closers, mn.close)
			e.nodes[i] = append(e.nodes[i], mn.node)
			n := mn.node
			if cfg.Wrap != nil {
				n = cfg.Wrap(i, j, n)
			}
			nodes = append(nodes, n)
		}
		lc := LockerConfig(NodeTimeout)
		if cfg.Locker != nil {
			lc = cfg.Locker(i)
		}
		cl, err := newClient(i, e, nodes, lc)
		if err != nil {
			e.Close()
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		e.clients = append(e.clients, cl)
	}
	return e, nil
}

// Close closes the clients' connections and the proxies.
func (e *Env) Close() error {
	var errs []error
	for _, c := range e.closers {
		errs = append(errs, c())
	}
	e.Net.Close()
	if e.direct != nil {
		errs = append(errs, e.direct.Close())
	}
	return errors.Join(errs...)
}

// Key returns the Redis key of the lock named name in this run. Every run
// has keys of its own, so leftovers of an earlier run never interfere.
func (e *Env) Key(name string) string { return e.prefix + name }

// KeyPattern matches every key of this run (SCAN MATCH syntax).
func (e *Env) KeyPattern() string { return e.prefix + "*" }

// Clients returns the clients.
func (e *Env) Clients() []*Client { return e.clients }

// Client returns client i.
func (e *Env) Client(i int) *Client { return e.clients[i] }

// Transport returns how client i reaches the masters.
func (e *Env) Transport(i int) Transport { return e.dialers[i].transport }

// TransportDetail describes how client i reaches the masters, with the
// options its seed drew, e.g. "goredis (ReadTimeout 300ms)".
func (e *Env) TransportDetail(i int) string { return e.dialers[i].String() }

// Now is the current offset on the run's timeline.
func (e *Env) Now() time.Duration { return e.History.Offset(time.Now()) }

// Resource returns the fenced resource that the lock key protects.
func (e *Env) Resource(key string) *checker.Resource {
	e.mu.Lock()
	defer e.mu.Unlock()
	r := e.resources[key]
	if r == nil {
		r = &checker.Resource{}
		e.resources[key] = r
	}
	return r
}

// Pause freezes the calling client for d, as a GC pause or a stopped VM
// would: nothing, not even a context, cuts it short. It is logged as a
// fault.ClientPause.
func (e *Env) Pause(client int, d time.Duration) {
	start := e.Now()
	time.Sleep(d)
	e.Faults.Record(fault.Fault{Kind: fault.ClientPause, Node: -1, Clients: []int{client}, Arg: d}, start, e.Now(), "")
}

// Counts are the totals of a run so far.
type Counts struct {
	// Attempts counts calls of Acquire; Acquired those that got the lock.
	Attempts, Acquired int
	// Writes counts writes offered to the resources; Rejected the stale
	// ones refused; Late the ones made after the writer's validity.
	Writes, Rejected, Late int
	// Faults counts injected faults.
	Faults int
}

// Counts returns the totals so far. It is cheap enough for a progress
// display.
func (e *Env) Counts() Counts {
	c := Counts{
		Attempts: int(e.attempts.Load()),
		Acquired: e.History.Grants(),
		Late:     int(e.late.Load()),
		Faults:   e.Faults.Injected(),
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, r := range e.resources {
		w, rej := r.Counts()
		c.Writes += w
		c.Rejected += rej
	}
	return c
}

// KeysLeft counts the lock keys of this run on nodes (every node of the
// cluster if none is given), read directly, not through the proxies.
// Fencing counters ("...:fence"), which outlive their locks by design, are
// not counted, and neither are tombstones ("...:tomb:<id>", which a
// release that did not find its hold writes so that a late acquire cannot
// land after it) as long as they carry a TTL: they block nobody and
// expire. A tombstone without a TTL is counted.
func (e *Env) KeysLeft(ctx context.Context, nodes ...cluster.Node) (int, error) {
	if len(nodes) == 0 {
		nodes = e.Cluster.Nodes()
	}
	total := 0
	for _, n := range nodes {
		keys, err := cluster.Keys(ctx, n.Addr(), e.KeyPattern())
		if err != nil {
			return 0, err
		}
		for _, k := range keys {
			switch {
			case strings.HasSuffix(k, ":fence"):
			case tombstone(k):
				ms, err := cluster.PTTL(ctx, n.Addr(), k)
				if err != nil {
					return 0, err
				}
				if ms == -1 {
					total++ // a tombstone that never expires
				}
			default:
				total++
			}
		}
	}
	return total, nil
}

// AwaitNoKeys waits, for up to within, until nodes (every node if none is
// given) hold no key of this run, and returns how many were left in the
// end. Releases may land after Unlock returned (it returns at quorum), so
// checks for leftovers wait for them.
func (e *Env) AwaitNoKeys(ctx context.Context, within time.Duration, nodes ...cluster.Node) (int, error) {
	deadline := time.Now().Add(within)
	for {
		left, err := e.KeysLeft(ctx, nodes...)
		if err != nil || left == 0 || time.Now().After(deadline) {
			return left, err
		}
		select {
		case <-ctx.Done():
			return left, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// fence returns the fencing token of a lock just granted: the library's
// own (Config.Fencing), which increases from one holder of a key to the
// next as long as the masters keep their data. A master restarted without
// persistence loses its counter, so there the token can repeat: that case
// is caught by the overlap check, not by the token.
func (e *Env) fence(lk *redlock.Lock) int64 { return lk.Fence() }
