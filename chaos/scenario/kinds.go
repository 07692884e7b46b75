package scenario

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// safeKinds describes a safe scenario of the generative workload: the kinds
// of lock its clients exercise and the faults of its random schedule.
type safeKinds struct {
	kinds []workload.Kind
	// ttl of the locks; faults of the random schedule (at most maxFaulty
	// masters at once, 0: a minority), Slow's latency.
	ttl       time.Duration
	faults    []fault.Kind
	maxFaulty int
	latency   time.Duration
	// clientFaults adds, every ~300ms, a DropReply or a Reset on every link
	// of one client at once: the reply of its next command is lost on every
	// master (or everything in flight is), which a transport that sends a
	// command again turns into a command run twice everywhere.
	clientFaults bool
	// lateBy is how long a client waits after a failed Extend for late
	// commands to land.
	lateBy time.Duration
	// grantEvery is the longest mean time between grants that still
	// counts as the clients keeping on acquiring; 0 means 250ms.
	grantEvery time.Duration
	// pooled makes client 0 reach the masters in the Pooled mode, the
	// others through the default pipelined connections.
	pooled bool
	// echo has every client send ECHO calls beside its cycles, through the
	// same connections, and checks that each gets its own reply
	// (workload.Echoes).
	echo bool
	// probeRounds is how many times each probe runs; 0 means probeRounds.
	probeRounds int
}

// allFaults are the process and connection faults a safe run may draw.
var allFaults = append([]fault.Kind{fault.Kill, fault.Pause, fault.Cut, fault.Slow, fault.Restart,
	fault.DropReply, fault.Reset, fault.SlowSetup, fault.Multi}, fault.Generic...)

// connFaults are the faults that keep every master's data: safe for holds
// that are renewed past any down time.
var connFaults = append([]fault.Kind{fault.Pause, fault.Cut, fault.Slow, fault.DropReply, fault.Reset, fault.SlowSetup, fault.Multi}, fault.Generic...)

// kills reports whether ks kills masters (which then lose their data).
func kills(ks []fault.Kind) bool {
	return slices.Contains(ks, fault.Kill) || slices.Contains(ks, fault.Restart)
}

// run is the scenario body: the workload and the schedule under one
// errgroup, then every invariant from the history.
func (sk safeKinds) run(ctx context.Context, r *Run) error {
	e, err := r.Env(ctx, workload.EnvConfig{Clients: r.Clients(), Transport: r.Transports(), Seed: r.Seed})
	if err != nil {
		return err
	}
	// Killed masters without persistence stay down past the longest hold
	// that is not renewed (an outer reentrant hold: 2 TTLs). Renewed holds
	// run only with faults that keep the data.
	var downFor time.Duration
	if !e.Cluster.Nodes()[0].Persistent() {
		downFor = 3 * sk.ttl
	}
	d := r.Duration(3, 2*time.Second)
	sched := fault.Random(r.Seed, fault.RandomConfig{
		Nodes: Nodes, Clients: r.Clients(), Duration: d, DownFor: downFor, MaxFaulty: sk.maxFaulty,
		Kinds: sk.faults, Gap: 150 * time.Millisecond, Hold: 400 * time.Millisecond, Rejoin: rejoin(workload.LongestTTL(sk.ttl)),
		Latency: cmp.Or(sk.latency, 20*time.Millisecond),
	})
	if sk.clientFaults {
		sched = append(sched, clientFaults(r.Seed, r.Clients(), d)...)
		sched = append(sched, fault.ClientDelays(r.Seed, r.Clients(), Nodes, d)...)
		slices.SortStableFunc(sched, func(a, b fault.Fault) int { return cmp.Compare(a.At, b.At) })
	}
	r.Logf("kinds %v; %d faults scheduled over %v (%v); killed masters stay down >= %v",
		sk.kinds, sched.Injections(), d, sk.faults, downFor)

	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	from := e.Now()
	var echoes *workload.Echoes
	if sk.echo {
		echoes = &workload.Echoes{}
	}
	if err := workload.Run(wctx, e, workload.Config{Kinds: sk.kinds, Keys: 2, TTL: sk.ttl, Hold: 5 * time.Millisecond,
		LateBy: sk.lateBy, Faults: sched, Seed: r.Seed, Echoes: echoes}); err != nil {
		return err
	}
	to := e.Now()
	if err := sk.probe(ctx, r, e); err != nil {
		return err
	}
	if echoes != nil {
		if err := echoes.Probe(ctx, e, probeRounds*5); err != nil {
			return err
		}
	}

	c := r.Checked()
	by := c.ByInvariant()
	r.Check("no overlap", c.Safe(), "%d overlaps among %d acquisitions", len(c.Overlaps), len(c.Intervals))
	r.Check("until within the masters' expiry", by[checker.UntilWithinExpiry] == 0, "%d holders believed valid past a quorum's expiry%s",
		by[checker.UntilWithinExpiry], first(c, checker.UntilWithinExpiry))
	r.Check("no key left", by[checker.NoKeyLeft] == 0, "%d calls left a quorum holding their key%s", by[checker.NoKeyLeft], first(c, checker.NoKeyLeft))
	r.Check("nothing left on any master", by[checker.NothingLeft] == 0, "%d calls left something on a master to which no release failed%s",
		by[checker.NothingLeft], first(c, checker.NothingLeft))
	r.Check("no reader beside a writer", by[checker.NoReaderBesideWriter] == 0, "%d times a master held a live reader beside the writer%s",
		by[checker.NoReaderBesideWriter], first(c, checker.NoReaderBesideWriter))
	r.Check("renewed locks held", by[checker.RenewalHolds] == 0, "%d renewed holds lost while no renewal failed for want of answers%s",
		by[checker.RenewalHolds], first(c, checker.RenewalHolds))
	r.Check("contexts end by Until", by[checker.ContextWithinUntil] == 0, "%d lock contexts live more than %v past their lock's Until%s",
		by[checker.ContextWithinUntil], checker.ContextTolerance, first(c, checker.ContextWithinUntil))
	if echoes != nil {
		ec := echoes.Counts()
		detail := ""
		if ec.First != "" {
			detail = "; first: " + ec.First
		}
		r.Check("replies in step", ec.Mismatched == 0, "%d of %d ECHO replies were another call's (%d calls)%s",
			ec.Mismatched, ec.Answered, ec.Calls, detail)
	}
	if !kills(sk.faults) || e.Cluster.Nodes()[0].Persistent() {
		r.Check("fences increase", by[checker.FenceIncreases] == 0, "%d tokens out of order%s", by[checker.FenceIncreases], first(c, checker.FenceIncreases))
	} else {
		r.Logf("fences: %d out of order (not checked: killed masters lose their counters)", by[checker.FenceIncreases])
	}
	if slices.Contains(sk.kinds, workload.Semaphore) {
		r.Check("at most K holders", by[checker.AtMostPermits] == 0, "%d holds beyond their semaphore's permits%s",
			by[checker.AtMostPermits], first(c, checker.AtMostPermits))
	}
	if slices.Contains(sk.kinds, workload.Fair) {
		bound := workload.FairStarvationBound(sk.ttl)
		vs := checker.StarvationAfterSetup(e.History.Events(), c.Intervals, workload.IsFair, bound, workload.FairSetup)
		firstStarved := ""
		if len(vs) > 0 {
			firstStarved = "; first: " + vs[0].String()
		}
		r.Check("no fair waiter starved", len(vs) == 0, "%d waits with the lock free over %v%s", len(vs), bound, firstStarved)
		sk.checkOrder(r, e)
	}
	least := int(d / cmp.Or(sk.grantEvery, 250*time.Millisecond))
	r.Check("clients keep acquiring", len(c.Intervals) >= least, "%d acquisitions in %v (at least %d), per client %v",
		len(c.Intervals), d, least, perClient(c, r.Clients()))
	r.Logf("longest time without a grant: %v", longestGap(c, from, to).Round(time.Millisecond))
	r.Check("faults injected", e.Faults.Injected() > 0, "%d faults", e.Faults.Injected())
	return nil
}

// probeRounds is how many times each probe runs after the random workload.
const probeRounds = 2

// checkOrder checks that the fair waiters were served in the order they
// registered (checker.OutOfOrder). A master restarted without persistence
// forgets the ticket counter and the registrations, and with them the
// order: where the schedule kills such masters, only the probes' keys
// (which run on a healed cluster) are checked.
func (sk safeKinds) checkOrder(r *Run, e *workload.Env) {
	events := e.History.Events()
	scope := "every fair key"
	if kills(sk.faults) && !e.Cluster.Nodes()[0].Persistent() {
		scope = "the probes' fair keys (killed masters forget the order)"
		events = slices.DeleteFunc(events, func(ev checker.Event) bool { return !strings.HasPrefix(ev.Key, "probe-") })
	}
	registered := 0
	for _, ev := range events {
		if ev.Kind == checker.Registered {
			registered++
		}
	}
	vs := checker.OutOfOrder(events)
	detail := ""
	if len(vs) > 0 {
		detail = "; first: " + vs[0].String()
	}
	r.Check("fair waiters served in order", len(vs) == 0, "%d grants passed an earlier registered waiter, on %s (%d waiters seen registered)%s",
		len(vs), scope, registered, detail)
}

// probe heals every fault the random schedule left in place, then runs the
// deterministic probes of the scenario's kinds, in the same history.
func (sk safeKinds) probe(ctx context.Context, r *Run, e *workload.Env) error {
	ps := workload.Probes(sk.kinds)
	if len(ps) == 0 {
		return nil
	}
	if err := e.Faults.HealAll(ctx); err != nil {
		return err
	}
	start := time.Now()
	rounds := cmp.Or(sk.probeRounds, probeRounds)
	if err := workload.RunProbes(ctx, e, ps, rounds); err != nil {
		return err
	}
	r.Logf("probes %v, %d rounds, in %v", ps, rounds, time.Since(start).Round(time.Millisecond))
	return nil
}

// first describes the first violation of inv, if any.
func first(c checker.Result, inv checker.Invariant) string {
	for _, v := range c.Violations {
		if v.Invariant == inv {
			return "; first: " + v.String()
		}
	}
	return ""
}

// rejoin is how long a restarted master stays out of the clients'
// quorums once it is back (fault.RandomConfig.Rejoin): the restart guard
// holds it back for the longest TTL they used (workload.LongestTTL), and
// its uptime counts whole seconds.
func rejoin(longest time.Duration) time.Duration { return longest + time.Second }

// clientFaults draws, every 200-400ms, a DropReply or a Reset on every
// link of one client.
func clientFaults(seed uint64, clients int, d time.Duration) fault.Schedule {
	rng := rand.New(rand.NewPCG(seed, 0xc11e7))
	var s fault.Schedule
	for t := 100 * time.Millisecond; t < d-100*time.Millisecond; t += time.Duration(200+rng.IntN(200)) * time.Millisecond {
		c := rng.IntN(clients)
		k := fault.DropReply
		if rng.IntN(3) == 0 {
			k = fault.Reset
		}
		for j := range Nodes {
			s = append(s, fault.Fault{At: t, Kind: k, Node: j, Clients: []int{c}})
		}
		if k == fault.DropReply { // disarm what did not fire
			for j := range Nodes {
				s = append(s, fault.Fault{At: t + 150*time.Millisecond, Kind: fault.Heal, Node: j, Clients: []int{c}})
			}
		}
	}
	return s
}

// safeScenarios are the safe scenarios of the generative workload, one per
// kind of lock and one with every kind.
func safeScenarios() []Scenario {
	const ttl = 500 * time.Millisecond
	list := []struct {
		name, invariant string
		sk              safeKinds
	}{
		{"safe-plain", "plain locks, Lock and TryLock mixed, some Unlocks with an ended context, private keys whose failed attempts must leave nothing; one client in the Pooled mode; ECHO calls beside them each get their own reply",
			safeKinds{kinds: []workload.Kind{workload.Plain}, ttl: ttl, faults: allFaults, clientFaults: true, pooled: true, echo: true}},
		{"safe-reentrant", "one owner at a time; nested holds with shorter TTLs, extended, never shorten or end the outer hold; an owner id reused by a retried job after its hold expired: the stalled hold's late Unlock never counts down the new hold",
			safeKinds{kinds: []workload.Kind{workload.Reentrant}, ttl: ttl, faults: allFaults, clientFaults: true}},
		{"safe-rw", "one writer and no reader beside it, or readers only; writer preference; readers extended and renewed, and no master ever holds a live reader beside the writer (a late read Extend re-admits nobody)",
			safeKinds{kinds: []workload.Kind{workload.RW}, ttl: ttl, faults: allFaults, clientFaults: true}},
		{"safe-renew", "AutoRenew locks and Locker.Do hold past the TTL; a renewed Until never passes the masters' expiry; a renewed lock is not lost while its renewal gets through; Lock.Context and Do's function context end by the lock's Until",
			safeKinds{kinds: []workload.Kind{workload.Renew}, ttl: ttl, faults: connFaults, clientFaults: true, grantEvery: time.Second}},
		{"safe-extend", "Extend with random TTLs, two at a time and beside the renewal, some with an ended context: Until never passes the masters' expiry, late extends included; Lock.Context ends by the Until the Extends left",
			safeKinds{kinds: []workload.Kind{workload.Extend}, ttl: ttl, faults: connFaults, maxFaulty: 3,
				latency: 3 * workload.NodeTimeout / 2, lateBy: 2 * workload.NodeTimeout, clientFaults: true,
				grantEvery: 500 * time.Millisecond}}, // holds extended up to 3 TTLs, a majority faulty at times
		{"safe-semaphore", "at most K holders of a semaphore at once (K = 2 and K = 3): permits taken by Acquire and TryAcquire, extended, released",
			safeKinds{kinds: []workload.Kind{workload.Semaphore}, ttl: ttl, faults: allFaults, clientFaults: true}},
		{"safe-multi", "no key of a multi-key lock held by two at once: overlapping sets of 1-3 keys and plain locks of single keys, failed sets leaving nothing; a lock handed over by its token and resumed, a stale token (after Unlock) never resumed, and the giver's late Unlock or Extend changing nothing",
			safeKinds{kinds: []workload.Kind{workload.Multi, workload.Resume}, ttl: ttl, faults: allFaults, clientFaults: true}},
		{"safe-fair", "one holder of a fair lock at a time, also while it holds past every waiter's registration; waiters served in the order they registered; waiters that crash or give up mid-wait; no waiter waits while the lock lies free longer than a bound (TTL + registration + retry ceiling + 3 node timeouts), and a crashed waiter's registration expires; ECHO calls beside them each get their own reply",
			safeKinds{kinds: []workload.Kind{workload.Fair}, ttl: ttl, faults: allFaults, clientFaults: true, echo: true}},
		{"safe-mixed", "every kind of lock at once, every fault that keeps the masters' data; one client in the Pooled mode; each probe once",
			safeKinds{kinds: workload.Kinds, ttl: ttl, faults: connFaults, clientFaults: true, pooled: true, probeRounds: 1}},
	}
	var out []Scenario
	for _, s := range list {
		out = append(out, Scenario{
			Name:      s.name,
			Kind:      kindsText(s.sk.kinds),
			Invariant: s.invariant + "; every holder's Until within the masters' expiry; no call leaves a quorum holding its key, nor anything on a master to which none of its releases failed; fences increase",
			Expect:    fmt.Sprintf("0 overlaps and 0 violations of any invariant; both checkers agree; faults %v", s.sk.faults),
			run:       s.sk.run,
		})
	}
	return out
}

func kindsText(ks []workload.Kind) string {
	if slices.Equal(ks, workload.Kinds) {
		return "all"
	}
	s := ""
	for i, k := range ks {
		if i > 0 {
			s += ","
		}
		s += string(k)
	}
	return s
}
