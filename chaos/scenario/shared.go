package scenario

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// work is how long a holder of the scripted scenarios works in its critical
// section before it writes.
const work = 100 * time.Millisecond

// shared configures a scenario about a master two quorums share. Client A
// reaches masters 0-2 only and client B masters 2-4 only. A locks on
// {0,1,2}; then master 2 is disrupted; then B tries for a second and
// writes if it got the lock; then A finishes its work, writes and
// releases; B, if it did not get the lock yet, gets it now. The unsafe
// scenarios take a long TTL, so that A's lock is still valid when B gets
// it however slow the restart is (A releases right after, so the run
// stays short); the safe ones need no such margin.
type shared struct {
	ttl     time.Duration
	disrupt func(ttl time.Duration) fault.Fault
	// guard is every client's Config.RestartGuard: 0 the default guard
	// (the restarts a Node saw), < 0 off.
	guard time.Duration
	// warm makes B lock (another key) before A does, as a long-running
	// client would have: its Nodes meet master 2 before the disruption,
	// so that the default guard sees a restart.
	warm bool
	// warmFor, when set, is the TTL B's warm-up lock is acquired with,
	// and that lock is not extended: B's default guard then learns the
	// longest TTL from an acquire only (restart-guarded learns it from an
	// Extend).
	warmFor time.Duration
	// strict adds client C, which reaches masters 2-4 like B but first
	// meets master 2 after the disruption, with the strict guard
	// (RestartGuard = ttl, the longest TTL any client uses): it tries
	// once before B, must be held back by the guard, and gets the lock at
	// the end.
	strict bool
	// extendTo, when set, is how long A and B extend their locks once
	// granted: the longest TTL every client uses is then extendTo, which
	// the guards must cover, and B's first try lasts until A's extended
	// lock expires.
	extendTo time.Duration
	// transport, when set, is how A and B reach the masters (default: the
	// pipelined pool.Node).
	transport workload.Transport
	// life is B's process lifetime (default: long-lived, the Env's client):
	// a fresh process made after the disruption, or one per attempt (see
	// lifetime).
	life lifetime
	// aofAfter restarts the disrupted master with AOF and appendfsync
	// always, where it ran without: it comes back empty all the same.
	aofAfter bool
	// unregistered leaves out the registering lock (register): A's lock
	// is the deployment's first, taken in the partition.
	unregistered bool
	// history makes A lock and release the key this many times on
	// masters 0-2 before its lock (a key in use): the fencing counters
	// there run ahead of those on the masters only B reaches, so that a
	// counter the disrupted master lost shows in B's token.
	history int
}

// lifetime is how long a client's process lives, beside the restart.
type lifetime string

const (
	// longLived is a client made before the restart, which may have met
	// the master before it (warm).
	longLived lifetime = "long-lived"
	// freshProcess is a client made after the restart (a service started
	// later): its Nodes first meet the new master process.
	freshProcess lifetime = "fresh"
	// perLock is a client per attempt ("redlock run", a cron job): each
	// TryLock is made by a process started for it, closed after it.
	perLock lifetime = "per-lock"
)

// longest is the longest TTL a client of the scenario uses.
func (s shared) longest() time.Duration { return max(s.ttl, s.extendTo, s.warmFor) }

// restartHistory is how many times restart-delayed's A locks the key
// before the lock the restart is about: well above the attempts B makes
// while A holds it (each counts its fence up on masters 3 and 4).
const restartHistory = 40

// restartAtOnce kills master 2 and starts it again without delay.
func restartAtOnce(time.Duration) fault.Fault { return fault.Fault{Kind: fault.Restart, Node: 2} }

// sharedNode is the body of a scenario about a master two quorums share,
// with the default guard and no warm-up (see shared).
func sharedNode(ttl time.Duration, disrupt func(ttl time.Duration) fault.Fault) func(context.Context, *Run) error {
	return shared{ttl: ttl, disrupt: disrupt}.run
}

// locker is client i's configuration.
func (s shared) locker(i int) redlock.Config {
	cfg := workload.LockerConfig(workload.NodeTimeout)
	cfg.RestartGuard = s.guard
	if s.strict && i == 2 {
		cfg.RestartGuard = s.longest()
	}
	return cfg
}

// cuts are the faults that give A masters 0-2 only, and B (and C) masters
// 2-4 only.
func cuts(clients int) []fault.Fault {
	fs := []fault.Fault{
		{Kind: fault.Cut, Node: 3, Clients: []int{0}},
		{Kind: fault.Cut, Node: 4, Clients: []int{0}},
	}
	for c := 1; c < clients; c++ {
		fs = append(fs, fault.Fault{Kind: fault.Cut, Node: 0, Clients: []int{c}}, fault.Fault{Kind: fault.Cut, Node: 1, Clients: []int{c}})
	}
	return fs
}

func (s shared) run(ctx context.Context, r *Run) error {
	clients := 2
	if s.strict {
		clients = 3
	}
	ecfg := workload.EnvConfig{Clients: clients, Locker: s.locker}
	if s.transport != "" {
		ecfg.Transport = workload.AllOver(s.transport)
	}
	e, err := r.Env(ctx, ecfg)
	if err != nil {
		return err
	}
	a, b := e.Client(0), e.Client(1)
	if s.guard >= 0 && !s.unregistered {
		if err := register(ctx, e, a, registerTTL); err != nil {
			return err
		}
	}
	if s.aofAfter {
		if _, ok := e.Cluster.Nodes()[2].(cluster.Reconfigurable); !ok {
			return fmt.Errorf("%w: changing a master's persistence before its restart needs the local backend", cluster.ErrUnsupported)
		}
	}
	if err := r.Apply(ctx, cuts(clients)...); err != nil {
		return err
	}
	if s.warm {
		if err := s.warmUp(ctx, b); err != nil {
			return err
		}
	}
	for range s.history {
		h, err := acquire(ctx, a, "k", s.ttl)
		if err != nil {
			return fmt.Errorf("scenario: client A could not lock on masters 0-2: %w", err)
		}
		h.Release(ctx)
	}
	ha, err := acquire(ctx, a, "k", s.ttl)
	if err != nil {
		return fmt.Errorf("scenario: client A could not lock on masters 0-2: %w", err)
	}
	if err := s.extend(ctx, ha); err != nil {
		return err
	}
	r.Logf("A granted on redis-0..2 (token %d), valid for %v", ha.Token, time.Until(ha.Lock.Until()).Round(time.Millisecond))
	f := s.disrupt(s.ttl)
	if s.aofAfter {
		e.Cluster.Nodes()[2].(cluster.Reconfigurable).SetAOF(true)
	}
	disrupted := e.Now()
	if err := r.Apply(ctx, f); err != nil {
		return err
	}
	r.Logf("then %v%s", f, map[bool]string{true: ", with AOF and appendfsync always now", false: ""}[s.aofAfter])
	switch s.life {
	case freshProcess:
		fresh, closeFresh, err := e.Fresh(1, e.Transport(1))
		if err != nil {
			return err
		}
		defer closeFresh()
		b = fresh
		r.Logf("B is a process started after the restart (%s)", e.TransportDetail(1))
	case perLock:
		hb, bWhileA, errFirst := contendPerLock(ctx, r, e, ha, s.ttl, time.Until(ha.Lock.Until()), s.longest()+5*time.Second)
		r.Check("B acquires", hb, "after A released, within %v", s.longest()+5*time.Second)
		s.heldBack(r, e, bWhileA, errFirst, disrupted, clients)
		return nil
	}

	var (
		hc      *workload.Held
		cWhileA bool
		errC    error
	)
	if s.strict {
		// One attempt, before B contends: a refusal is the guard's.
		hc, errC = e.Client(2).Acquire(ctx, "k", s.ttl, true)
		cWhileA = hc != nil && time.Now().Before(ha.Lock.Until())
	}
	tryFor := time.Second
	if s.extendTo > 0 {
		tryFor = time.Until(ha.Lock.Until())
	}
	if s.life == freshProcess || s.life == perLock {
		tryFor = time.Until(ha.Lock.Until())
	}
	hb, bWhileA, errFirst, errB := contend(ctx, r, b, ha, s.ttl, tryFor, s.longest()+5*time.Second)
	r.Check("B acquires", hb != nil, "%s", errText(errB))
	if s.strict {
		s.strictClient(ctx, r, e.Client(2), hc, cWhileA, errC)
	}
	if s.guard == 0 && (s.warm || s.life != "") {
		s.heldBack(r, e, bWhileA, errFirst, disrupted, clients)
	} else {
		judge(r, bWhileA)
	}
	return nil
}

// heldBack judges a safe scenario whose restarted master the restart
// guard must hold back: no overlap, B not granted while A's lock was
// valid, B's first refusals the guard's, and every client granted only
// once the master was up for the TTL.
func (s shared) heldBack(r *Run, e *workload.Env, bWhileA bool, errFirst error, disrupted time.Duration, clients int) {
	if judge(r, bWhileA) {
		return
	}
	r.Check("B held back by the restart guard", errors.Is(errFirst, redlock.ErrRestarted),
		"B's first attempts: %s", errText(errFirst))
	for c := 1; c < clients; c++ {
		at, ok := firstGrant(r.Checked(), c, "k")
		r.Check(fmt.Sprintf("client %d granted only once the master was up for the TTL", c), ok && at-disrupted >= s.ttl,
			"granted %v after the restart began (TTL %v)", (at - disrupted).Round(time.Millisecond), s.ttl)
	}
}

// contendPerLock is contend for a B that is a process per attempt: while A
// works, a process started for it tries once (TryLock) every 100ms, until
// tryFor passed; then A writes and releases, and processes try until one
// gets the lock, within wait. It returns B's hold (nil: none), whether B got
// it while A's lock was valid, and the first try's error.
func contendPerLock(ctx context.Context, r *Run, e *workload.Env, ha *workload.Held, ttl, tryFor, wait time.Duration) (got bool, whileA bool, first error) {
	try := func() (*workload.Held, error) {
		b, closeB, err := e.Fresh(1, e.Transport(1))
		if err != nil {
			return nil, err
		}
		defer closeB()
		hb, err := b.Acquire(ctx, "k", ttl, true)
		if hb != nil {
			hb.Write()
			hb.Release(ctx)
		}
		return hb, err
	}
	tries := 0
	for end := time.Now().Add(tryFor); time.Now().Before(end); tries++ {
		hb, err := try()
		if tries == 0 {
			first = err
		}
		if hb != nil {
			whileA = time.Now().Before(ha.Lock.Until())
			r.Logf("B (try %d, a process of its own) granted (token %d) while A valid: %t", tries, hb.Token, whileA)
			got = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	r.Logf("B tried %d times, each in a process of its own, while A held: %s", tries, errText(first))
	if !ha.Write() {
		r.Logf("A's write with token %d rejected as stale", ha.Token)
	}
	ha.Release(ctx)
	for end := time.Now().Add(wait); !got && time.Now().Before(end); {
		hb, _ := try()
		got = hb != nil
		if !got {
			time.Sleep(100 * time.Millisecond)
		}
	}
	return got, whileA, first
}

// registerTTL is the TTL of register's lock where the scenario's clients
// use longer ones: short, so that the records hold no TTL that the
// scenario's own clients did not use.
const registerTTL = 200 * time.Millisecond

// register has client a lock and release a key of its own, for ttl, while it still
// reaches every master, as the clients of a deployment in use have: the
// restart guard then knows every master (their records name their
// processes). Without it, the masters that the cuts keep a client from
// would be unknown to every client, a deployment's first lock taken in a
// partition (which the guard leaves to the operator). The lock is no part
// of the history: it is the deployment's past.
func register(ctx context.Context, e *workload.Env, a *workload.Client, ttl time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lk, err := a.Locker.Lock(ctx, e.Key("register"), ttl)
	if err != nil {
		return fmt.Errorf("scenario: client A could not lock with every master: %w", err)
	}
	return lk.Unlock(ctx)
}

// warmUp has B lock and release another key, for s.ttl extended to
// s.extendTo, or for s.warmFor.
func (s shared) warmUp(ctx context.Context, b *workload.Client) error {
	ttl := s.ttl
	if s.warmFor > 0 {
		ttl = s.warmFor
	}
	hw, err := acquire(ctx, b, "warm", ttl)
	if err != nil {
		return fmt.Errorf("scenario: client B could not lock on masters 2-4: %w", err)
	}
	if s.warmFor == 0 {
		if err := s.extend(ctx, hw); err != nil {
			return err
		}
	}
	hw.Release(ctx)
	return nil
}

// extend extends h to s.extendTo, if set.
func (s shared) extend(ctx context.Context, h *workload.Held) error {
	if s.extendTo == 0 {
		return nil
	}
	if err := h.Lock.Extend(ctx, s.extendTo); err != nil {
		return fmt.Errorf("scenario: lock %d could not be extended to %v: %w", h.ID, s.extendTo, err)
	}
	return nil
}

// firstGrant returns when client was first granted key, on the run's
// timeline.
func firstGrant(c checker.Result, client int, key string) (time.Duration, bool) {
	var at time.Duration
	ok := false
	for _, iv := range c.Intervals {
		if iv.Client == client && iv.Key == key && (!ok || iv.Start < at) {
			at, ok = iv.Start, true
		}
	}
	return at, ok
}

// judge checks the outcome of a scenario about a shared master: the
// overlap produced and detected for an unsafe one; for a safe one, none,
// and B not granted while A's lock was valid. It reports whether the
// scenario is unsafe.
func judge(r *Run, bWhileA bool) (unsafe bool) {
	c := r.Checked()
	if r.sc.Unsafe {
		r.Check("overlap produced and detected", len(c.Overlaps) > 0, "%d overlaps; B granted while A valid: %t", len(c.Overlaps), bWhileA)
		return true
	}
	r.Check("no overlap", c.Safe(), "%d overlaps", len(c.Overlaps))
	r.Check("B not granted while A's lock was valid", !bWhileA, "B granted while A valid: %t", bWhileA)
	return false
}

// contend is what B does once A holds the lock (ha) and their shared
// master was disrupted: B tries for tryFor (a lock for ttl) while A works
// in its critical section; A writes and releases; B, if it did not get
// the lock, gets it now, waiting up to wait, and releases it.
// It returns B's hold, whether B got it while A's lock was valid, and the
// errors of B's first try and of its last one.
func contend(ctx context.Context, r *Run, b *workload.Client, ha *workload.Held, ttl, tryFor, wait time.Duration) (hb *workload.Held, whileA bool, first, last error) {
	bctx, cancel := context.WithTimeout(ctx, tryFor)
	hb, first = b.Acquire(bctx, "k", ttl, false)
	cancel()
	whileA = hb != nil && time.Now().Before(ha.Lock.Until())
	if hb != nil {
		r.Logf("B granted on redis-2..4 (token %d) while A valid: %t", hb.Token, whileA)
		hb.Write()
	} else {
		r.Logf("B refused while A holds: %s", errText(first))
	}
	time.Sleep(work) // A is still in its critical section
	if !ha.Write() {
		r.Logf("A's write with token %d rejected as stale", ha.Token)
	}
	if err := ha.Release(ctx); err != nil {
		r.Logf("A's release: %v", err)
	}
	last = first
	if hb == nil {
		lctx, cancel := context.WithTimeout(ctx, wait)
		hb, last = b.Acquire(lctx, "k", ttl, false)
		cancel()
		if hb != nil {
			r.Logf("B granted after A released (token %d)", hb.Token)
			hb.Write()
		}
	}
	if hb != nil {
		hb.Release(ctx)
	}
	return hb, whileA, first, last
}

// strictClient checks what client C did beside B (hc, errC: its try
// while A held the lock), and takes the lock with it once B released.
func (s shared) strictClient(ctx context.Context, r *Run, cl *workload.Client, hc *workload.Held, whileA bool, errC error) {
	r.Check("C (strict guard, met the master after its restart) held back by the guard", !whileA && errors.Is(errC, redlock.ErrRestarted),
		"C granted while A valid: %t; %s", whileA, errText(errC))
	if hc != nil {
		hc.Write()
		hc.Release(ctx)
		return
	}
	lctx, cancel := context.WithTimeout(ctx, s.ttl+5*time.Second)
	hc, err := cl.Acquire(lctx, "k", s.ttl, false)
	cancel()
	r.Check("C acquires once the guard passed", hc != nil, "%s", errText(err))
	if hc != nil {
		hc.Write()
		hc.Release(ctx)
	}
}
