package redlock

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Config configures a Locker. The zero value is ready to use: every zero
// field means the default documented on it.
type Config struct {
	// Quorum is how many masters must grant a lock; 0 means len(nodes)/2+1.
	// Anything from len(nodes)/2+1 to len(nodes) is allowed: a smaller
	// quorum would let two clients hold the same lock.
	Quorum int
	// DriftFactor is the share of the TTL set aside for clock drift between
	// the client and the masters; 0 means DefaultDriftFactor. It must lie in
	// [0, 1). A fixed clock.MinDrift (2ms) is always added.
	DriftFactor float64
	// NodeTimeout bounds each call to one master; 0 means DefaultNodeTimeout.
	// Keep it small against the TTL: a TTL must exceed it.
	NodeTimeout time.Duration
	// Retry spaces the attempts of Locker.Lock; nil means DefaultRetry. A
	// typed nil (a nil RetryFunc or *ExponentialBackoff) is refused.
	Retry RetryStrategy
	// Clock measures elapsed time for validity; nil means clock.Real. A
	// typed nil is refused.
	Clock clock.Clock

	// Fencing makes every lock carry a fencing token (Lock.Fence) that
	// increases strictly from one holder of a key to the next. It costs a
	// script instead of a plain SET per master and one more round trip to
	// the granting quorum, and keeps a counter key per lock key. Writers of
	// an RWMutex and reentrant holds carry tokens too; readers do not. A
	// fenced lock (and any RWMutex) refuses, with ErrInvalid, a key whose
	// counter could not share its Redis Cluster hash slot: one without a
	// hash tag that contains '}'.
	Fencing bool
	// AutoRenew keeps every lock from Lock and TryLock renewed (extended by
	// its TTL) until Unlock or until it is lost; Locker.Do always renews.
	AutoRenew bool
	// RenewFraction is how far into the TTL a renewal happens, counted
	// back from Until: a renewal goes out once the validity left falls to
	// the TTL less this fraction of it, and must return within that (with
	// Durability, a confirmation may wait for an fsync: a second under
	// appendfsync everysec; give renewed locks a TTL of a few seconds
	// more than that). 0 means DefaultRenewFraction. It must lie in (0, 1).
	RenewFraction float64

	// OnNodeError, if set, is told of every failed call to a master: an
	// error reply, a network error, a timeout; also for calls that end
	// after the outcome was decided, and for the releases after a failed
	// attempt. op is "lock", "extend", "unlock", "check", "release" or
	// "guard" (the restart guard's records). It is how a
	// frozen or dead master becomes visible while locks still succeed on
	// the others. It runs on the caller's goroutine, or, for a failure
	// that comes after the call returned, on a goroutine of the library's
	// that tells such failures one after the other (never a connection's
	// reader): keep it fast, and safe for concurrent use.
	OnNodeError func(op, addr string, err error)
	// Observer, if set, is told of every acquisition call, release,
	// renewal, loss and failed call to a master (see Observer and
	// SlogObserver). Nil means none. OnNodeError keeps working beside it.
	Observer Observer

	// RestartGuard keeps the grants of a master that restarted (and may
	// have forgotten the locks it held) from counting until every lock it
	// may have forgotten has expired (see guard.go). 0, the default,
	// judges every master by the records the masters keep of each other
	// ({quorumlock}:guard): a master whose process the records do not name
	// is held back for the longest TTL any client recorded (and this
	// Locker's own), in every process, also one that first meets the
	// master after its restart; a fresh deployment, where no master has a
	// record, is usable at once. A positive value also guards every
	// master that has been up for less than it, whatever the records say.
	// A negative value turns the guard off. The guard needs every Node to
	// report its master's identity (Abilities.Identity: every Node in this
	// repository does); New refuses one that cannot, and the first call
	// refuses a master whose user may not run INFO (ErrInvalid), unless
	// the guard is off.
	RestartGuard time.Duration

	// FsyncAlways declares that every master persists every write (AOF
	// with appendfsync always), so that a restart loses no grant: the
	// restart guard is off, and Nodes need not report their masters'
	// identity. It is the operator's promise; redlock doctor checks it.
	FsyncAlways bool

	// Durability makes a master's grant and Extend count only once it is
	// durable: on its AOF on disk, and on its replicas (see Durability and
	// durable.go). Every Node must confirm (Abilities.Confirm: every Node
	// in this repository does), and New refuses one that cannot; the
	// masters must support what it asks (WAITAOF: Redis 7.2+ or Valkey,
	// with AOF on and appendfsync other than no), or the grant fails with
	// ErrInvalid.
	Durability Durability

	// KeyPrefix is put in front of every Redis key the Locker uses: the
	// lock keys, the keys derived from them (fencing counters, read-write
	// state, fair queues, permits, tombstones) and the release channels,
	// so that lock keys cannot collide with an application's data keys on
	// the same masters ("locks:" makes "invoice:42" the key
	// "locks:invoice:42"). Lock.Key, Keys and the events keep the names as
	// the caller gave them. Every client of one lock must use the same
	// prefix. "" (the default) uses the names as they are. A prefix that
	// would keep the derived keys out of their lock's Redis Cluster hash
	// slot (a '}' without a hash tag before it) is refused.
	KeyPrefix string

	// DisableWakeOnRelease makes a waiting Lock poll only (its Retry
	// backoff, and Unlocks through the same Locker): it never subscribes
	// to release announcements, even through a Node that is a Subscriber.
	DisableWakeOnRelease bool
}

// Defaults for zero Config fields.
const (
	DefaultDriftFactor = 0.01
	DefaultNodeTimeout = 50 * time.Millisecond
	// DefaultRenewFraction renews a lock a third of the way into its TTL,
	// which leaves two more chances before it would expire.
	DefaultRenewFraction = 1.0 / 3
)

// DefaultRetry is the retry strategy of a Config without one.
var DefaultRetry RetryStrategy = ExponentialBackoff{}

// RetryStrategy says how long Locker.Lock waits before its next attempt.
// Implementations must be safe for concurrent use.
type RetryStrategy interface {
	// Backoff returns the wait before retry number attempt (1 for the
	// first retry).
	Backoff(attempt int) time.Duration
}

// RetryFunc adapts a function to RetryStrategy.
type RetryFunc func(attempt int) time.Duration

// Backoff calls f.
func (f RetryFunc) Backoff(attempt int) time.Duration { return f(attempt) }

// ExponentialBackoff waits a random time in [0, ceiling) before each retry
// ("full jitter"), where the ceiling starts at Base and doubles with every
// retry up to Max. Randomness spreads competing clients apart, which is what
// breaks split votes.
type ExponentialBackoff struct {
	// Base is the first retry's ceiling; 0 means 4ms.
	Base time.Duration
	// Max caps the ceiling; 0 means 256ms.
	Max time.Duration
}

// Backoff returns a jittered wait for retry number attempt.
func (b ExponentialBackoff) Backoff(attempt int) time.Duration {
	return fullJitter(b.ceiling(attempt), rand.Float64())
}

// ceiling is min(Max, Base*2^(attempt-1)).
func (b ExponentialBackoff) ceiling(attempt int) time.Duration {
	base, limit := b.Base, b.Max
	if base <= 0 {
		base = 4 * time.Millisecond
	}
	if limit <= 0 {
		limit = 256 * time.Millisecond
	}
	if attempt < 1 {
		attempt = 1
	}
	c := float64(base) * math.Pow(2, float64(attempt-1))
	if c > float64(limit) {
		return limit
	}
	return time.Duration(c)
}

// fullJitter maps r in [0, 1) to a wait in [0, ceiling).
func fullJitter(ceiling time.Duration, r float64) time.Duration {
	return time.Duration(r * float64(ceiling))
}

// ErrInvalid is matched (errors.Is) by every error about bad input: a bad
// Config or node list, an empty key, a TTL that leaves no validity, a nil
// context. Such calls send nothing to Redis.
var ErrInvalid = errors.New("redlock: invalid argument")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// settings is a validated Config with defaults applied.
type settings struct {
	quorum      int
	driftFactor float64
	nodeTimeout time.Duration
	retry       RetryStrategy
	clock       clock.Clock

	fencing       bool
	autoRenew     bool
	renewFraction float64
	onNodeError   func(op, addr string, err error)
	observer      Observer // nil: none
	noWake        bool
	prefix        string
	durability    Durability
}

func (c Config) settings(n int) (settings, error) {
	s := settings{
		quorum:      c.Quorum,
		driftFactor: c.DriftFactor,
		nodeTimeout: c.NodeTimeout,
		retry:       c.Retry,
		clock:       c.Clock,

		fencing:       c.Fencing,
		autoRenew:     c.AutoRenew,
		renewFraction: c.RenewFraction,
		onNodeError:   c.OnNodeError,
		observer:      c.Observer,
		noWake:        c.DisableWakeOnRelease,
		prefix:        c.KeyPrefix,
		durability:    c.Durability,
	}
	if !layout.Derivable(c.KeyPrefix) {
		return s, invalid("key prefix %q: a '}' without a hash tag before it would keep the keys derived from a lock's key out of its Redis Cluster hash slot; drop the '}', or give the prefix a hash tag of its own", c.KeyPrefix)
	}
	if len(c.KeyPrefix) > MaxKeyLen/2 {
		return s, invalid("key prefix of %d bytes: the longest is %d", len(c.KeyPrefix), MaxKeyLen/2)
	}
	if s.durability.Replicas < 0 || s.durability.Timeout < 0 {
		return s, invalid("durability %+v: negative replicas or timeout", c.Durability)
	}
	if s.durability.Timeout == 0 {
		s.durability.Timeout = DefaultDurableTimeout
	}
	if s.quorum == 0 {
		s.quorum = n/2 + 1
	}
	if s.quorum <= n/2 || s.quorum > n {
		return s, invalid("quorum %d of %d nodes: it must be between %d and %d", c.Quorum, n, n/2+1, n)
	}
	if math.IsNaN(s.driftFactor) || s.driftFactor < 0 || s.driftFactor >= 1 {
		return s, invalid("drift factor %v outside [0, 1)", c.DriftFactor)
	}
	if s.driftFactor == 0 {
		s.driftFactor = DefaultDriftFactor
	}
	if s.nodeTimeout < 0 {
		return s, invalid("negative node timeout %v", c.NodeTimeout)
	}
	if s.nodeTimeout == 0 {
		s.nodeTimeout = DefaultNodeTimeout
	}
	if math.IsNaN(s.renewFraction) || s.renewFraction < 0 || s.renewFraction >= 1 {
		return s, invalid("renew fraction %v outside (0, 1)", c.RenewFraction)
	}
	if s.renewFraction == 0 {
		s.renewFraction = DefaultRenewFraction
	}
	if s.retry == nil {
		s.retry = DefaultRetry
	} else if isNil(s.retry) {
		return s, invalid("retry strategy %T is a nil value", c.Retry)
	}
	if s.observer != nil && isNil(s.observer) {
		return s, invalid("observer %T is a nil value", c.Observer)
	}
	if s.clock == nil {
		s.clock = clock.Real
	} else if isNil(s.clock) {
		return s, invalid("clock %T is a nil value", c.Clock)
	}
	return s, nil
}

// checkTTL rejects a TTL that cannot give a lock any validity once cut to
// the whole milliseconds that the masters enforce.
func (s settings) checkTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return invalid("ttl %v must be positive", ttl)
	}
	if ttl < time.Millisecond {
		return invalid("ttl %v is below Redis's 1ms resolution", ttl)
	}
	enforced := ttl.Truncate(time.Millisecond)
	if drift := clock.Drift(enforced, s.driftFactor); enforced <= drift {
		return invalid("ttl %v (%v in whole milliseconds) leaves no validity after the drift allowance %v", ttl, enforced, drift)
	}
	if enforced <= s.nodeTimeout {
		return invalid("ttl %v must exceed the node timeout %v", ttl, s.nodeTimeout)
	}
	return nil
}
