package bench

import (
	"context"
	"errors"
	"time"
)

// Mutex is the one interface every implementation in the benchmark
// satisfies: a lock on one key, used by one goroutine at a time. The
// scenarios see nothing else of an implementation.
type Mutex interface {
	// Lock acquires the key. It waits, by the implementation's own retry
	// policy, while another holder has it; the raw limit makes one attempt.
	Lock(ctx context.Context) error
	// Unlock releases what the last successful Lock acquired.
	Unlock(ctx context.Context) error
}

// Locker makes Mutexes for keys on one set of Redis masters.
type Locker interface {
	NewMutex(key string) Mutex
	// Close releases the Locker's connections.
	Close() error
}

// FaultReporter is implemented by a Locker whose library tells its caller,
// through its public API, about nodes that failed during calls that
// otherwise succeeded. NodeFaults returns how many such node failures the
// caller has seen so far. The degraded scenario uses it to say whether a
// frozen node is visible to the caller or silently ignored.
type FaultReporter interface {
	NodeFaults() int64
}

// Scenario names one measurement of the harness.
type Scenario uint8

// The scenarios, as bits so that an Impl can list the ones it takes part in.
const (
	Latency Scenario = 1 << iota
	Throughput
	Contention
	Degraded
)

// Settings are the values every implementation is given alike, so that the
// comparison is between algorithms and clients, not between configurations.
type Settings struct {
	// TTL is the lock expiry of every implementation; 0 means 8s,
	// redsync's default expiry.
	TTL time.Duration
	// PoolSize is the number of idle connections each client keeps per
	// node (redigo MaxIdle, go-redis PoolSize); 0 means 64, quorumlock's
	// default.
	PoolSize int
	// DialTimeout bounds connecting, for every client; 0 means 5s,
	// quorumlock's default.
	DialTimeout time.Duration
	// Retry is the fixed delay between attempts for the peers whose retry
	// delay the harness chooses (redislock has no default retry); 0 means
	// 10ms.
	Retry time.Duration
}

func (s Settings) withDefaults() Settings {
	if s.TTL <= 0 {
		s.TTL = 8 * time.Second
	}
	if s.PoolSize <= 0 {
		s.PoolSize = 64
	}
	if s.DialTimeout <= 0 {
		s.DialTimeout = 5 * time.Second
	}
	if s.Retry <= 0 {
		s.Retry = 10 * time.Millisecond
	}
	return s
}

// Impl is one implementation under test.
type Impl struct {
	// Name identifies the implementation in tables, JSON and benchmark
	// names (impl=Name); it contains no spaces or slashes.
	Name string
	// Config describes how the implementation is configured.
	Config string
	// MaxNodes is the largest N it supports; 0 means any.
	MaxNodes int
	// Scenarios lists the scenarios it takes part in.
	Scenarios Scenario
	// New connects it to the masters at addrs; zero Settings fields get
	// their defaults.
	New func(addrs []string, s Settings) (Locker, error)
}

// Supports reports whether the implementation takes part in scenario sc
// with n nodes.
func (im Impl) Supports(sc Scenario, n int) bool {
	return im.Scenarios&sc != 0 && (im.MaxNodes == 0 || n <= im.MaxNodes)
}

// The implementation names.
const (
	Ours              = "quorumlock"
	OursPooled        = "quorumlock-pooled"
	OursPolling       = "quorumlock-polling"
	OursApart         = "quorumlock-apart"
	OursApartPolling  = "quorumlock-apart-polling"
	OursFair          = "quorumlock-fair"
	Redsync           = "redsync"
	RedsyncFailFast   = "redsync-failfast"
	RedsyncNoDeadline = "redsync-nodeadline"
	Redislock         = "redislock"
	Raw               = "raw"
	Pipelined         = "pipelined"
)

// Impls returns every implementation, ours first. Each is configured from
// the Settings given to its New; Config says how.
func Impls() []Impl {
	all := Latency | Throughput | Contention | Degraded
	impls := []Impl{
		{
			Name: Ours, Scenarios: all, New: newOurs(false, false),
			Config: "redlock.Config{} and pool.Config{Addr} with every other field zero, i.e. the library's defaults: " +
				"node timeout 50ms, drift factor 0.01, quorum N/2+1, retry with full-jitter exponential backoff " +
				"(4ms doubling to 256ms) woken early by release notifications, one shared auto-pipelined " +
				"connection per node (stall timeout 1s), dial timeout 5s; plus an OnNodeError observer that counts " +
				"(how the caller sees a faulty node)",
		},
		{
			Name: OursPooled, Scenarios: all, New: newOurs(true, false),
			Config: "as quorumlock, with pool.Config.Pooled: a pooled redigo connection per concurrent command " +
				"(MaxIdle 64) instead of the shared auto-pipelined one",
		},
		{
			Name: OursPolling, Scenarios: Contention, New: newOurs(false, true),
			Config: "as quorumlock, with release notifications off (its nodes hide pool.Node.Subscribe); " +
				"within one Locker the waiters still hand the lock on through its per-key queue",
		},
		{
			Name: OursApart, Scenarios: Contention, New: newOursApart(false),
			Config: "as quorumlock, but every contending client has a Locker and connections of its own, " +
				"as separate processes would: only release notifications (or polling) tell a waiter the lock is free",
		},
		{
			Name: OursApartPolling, Scenarios: Contention, New: newOursApart(true),
			Config: "as quorumlock-apart, with release notifications off: waiters only poll (full-jitter backoff, 4ms doubling to 256ms); " +
				"quorumlock-apart against this row is what wake on release is worth",
		},
		{
			Name: OursFair, Scenarios: Contention, New: newOursFair,
			Config: "Locker.Fair at the library's defaults, every contending client with a Locker and connections of its own " +
				"as in quorumlock-apart: a waiter draws a ticket from a quorum and the masters grant only the earliest live ticket, " +
				"woken by release notifications",
		},
		{
			Name: Redsync, Scenarios: all, New: newRedsync(false, true),
			Config: "redsync/v4 with the redigo adapter and its defaults: expiry 8s (WithExpiry(TTL)), tries 32, " +
				"retry delay uniform in [50ms,250ms), drift factor 0.01, timeout factor 0.05 (400ms), fail-fast off; " +
				"redigo pool MaxIdle 64, dial timeout 5s, read/write timeout 400ms (= expiry x timeout factor, " +
				"because the adapter's commands ignore the context that carries redsync's per-node timeout)",
		},
		{
			Name: RedsyncFailFast, Scenarios: Degraded, New: newRedsync(true, true),
			Config: "as redsync, with WithFailFast(true): return as soon as a quorum answered",
		},
		{
			Name: RedsyncNoDeadline, Scenarios: Degraded, New: newRedsync(false, false),
			Config: "as redsync, with redigo's default connection settings (no read/write timeout)",
		},
		{
			Name: Redislock, MaxNodes: 1, Scenarios: Latency | Throughput | Contention, New: newRedislock,
			Config: "bsm/redislock on go-redis/v9 (PoolSize 64, dial timeout 5s, go-redis default read/write timeout 3s), " +
				"Obtain with TTL 8s and RetryStrategy LinearBackoff(10ms) (redislock does not retry by default)",
		},
		{
			Name: Raw, Scenarios: Latency | Throughput, New: newRaw,
			Config: "the cost floor: per cycle, SET key token NX PX ttl then EVALSHA compare-and-delete, " +
				"each sent with bare redigo Do on pooled connections to all N nodes at once (N-1 goroutines), " +
				"waiting for every reply; one attempt, no retry, no validity arithmetic; redigo pool as redsync's",
		},
	}
	impls = append(impls, Impl{
		Name: Pipelined, Scenarios: Latency | Throughput | Degraded, New: newPipelined,
		Config: "not a library: the prototype of pool's default auto-pipelined connection, kept as a floor. The raw limit's commands, " +
			"but one connection per node shared by all callers, concurrent commands coalesced into one write " +
			"(flat combining), replies matched in order by one reader goroutine per node, the fan-out decided at " +
			"the quorum or after 50ms, a node with 4096 unanswered commands failed without sending",
	})
	impls = append(impls, clientImpls()...)
	impls = append(impls, rueidisImpls()...)
	for i := range impls {
		newFn := impls[i].New
		impls[i].New = func(addrs []string, s Settings) (Locker, error) { return newFn(addrs, s.withDefaults()) }
	}
	return impls
}

// ErrNotAcquired is returned by the adapters whose library reports a lock
// it did not get as a false result rather than an error.
var ErrNotAcquired = errors.New("bench: not acquired")

// ErrNotHeld is returned by the adapters whose library reports an unlock of
// a lock it no longer held as a false result rather than an error.
var ErrNotHeld = errors.New("bench: not held")
