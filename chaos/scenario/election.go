package scenario

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// The election scenario (issue 31): redlock.Election under chaos, every
// client a candidate and an observer, each through one of the Node types
// (workload.Transports, one per client; --client gives them all one),
// first under a random schedule of the faults that keep the masters' data
// (as safe-renew: leaderships are renewed locks), then in a quiet phase
// with one master killed, whose rounds hand the leadership over by crashes
// and resignations. See workload/election.go for the workload and
// checker/election.go for the invariants.

// electionTTL is the election's TTL: observers poll every 75ms (an
// observation window of 250ms), and a crashed leader is replaced within
// 300ms + 256ms + 300ms.
const electionTTL = 300 * time.Millisecond

func electionScenarios() []Scenario {
	return []Scenario{{
		Name: "election",
		Kind: "election",
		Invariant: "leader election (Election: Campaign, Proclaim, Resign, Leader, Observe) with a candidate and an observer per Node type: " +
			"at most one leader per term; terms increase with each new leader; no two leaders at once (leaderships as holds, and actions fenced by term); " +
			"Leader reads a quorum (never a stale term); observers get leaders in term order, each one a candidate made, and skip none that was current for 2 observe polls + a node timeout while a majority was up; " +
			"a leader that resigned or crashed is replaced within TTL + retry ceiling + 3 node timeouts while a majority is up",
		Expect: "0 violations of any invariant, the election's included; both checkers agree; faults " + fmt.Sprint(electionFaults) + ", then one master killed",
		run:    election,
	}}
}

// electionFaults are the faults of the election's random phase: those
// that keep the masters' data (leaderships are renewed locks, as in
// safe-renew), with the per-client drops and resets and delays.
var electionFaults = connFaults

// electionTransports gives client i the i-th transport, every Node type
// once, unless the run gives every client one.
func (r *Run) electionTransports() func(client int) workload.Transport {
	if r.opts.Transport != "" {
		return workload.AllOver(r.opts.Transport)
	}
	return func(i int) workload.Transport { return workload.Transports[i%len(workload.Transports)] }
}

func election(ctx context.Context, r *Run) error {
	const ttl = electionTTL
	clients := len(workload.Transports)
	e, err := r.Env(ctx, workload.EnvConfig{Clients: clients, Transport: r.electionTransports(), Seed: r.Seed})
	if err != nil {
		return err
	}
	d := r.Duration(3, 1500*time.Millisecond)
	sched := fault.Random(r.Seed, fault.RandomConfig{
		Nodes: Nodes, Clients: clients, Duration: d, Kinds: electionFaults,
		Gap: 150 * time.Millisecond, Hold: 400 * time.Millisecond, Rejoin: rejoin(ttl), Latency: 20 * time.Millisecond,
	})
	sched = append(sched, clientFaults(r.Seed, clients, d)...)
	sched = append(sched, fault.ClientDelays(r.Seed, clients, Nodes, d)...)
	slices.SortStableFunc(sched, func(a, b fault.Fault) int { return cmp.Compare(a.At, b.At) })
	r.Logf("random phase: %d faults scheduled over %v (%v); then the quiet phase, master %d killed", sched.Injections(), d, electionFaults, Nodes-1)

	el := workload.NewElection(e, workload.ElectionConfig{Name: "election", TTL: ttl, Seed: r.Seed})
	stop := el.Observe(ctx)
	wctx, cancel := context.WithTimeout(ctx, d)
	err = el.Run(wctx, sched)
	cancel()
	random := len(el.History().Leaders)
	r.Logf("random phase: campaigns failed %s", el.Failed())
	if err == nil {
		err = e.Faults.HealAll(ctx)
	}
	var spans [][2]time.Duration
	quiet := time.Now()
	if err == nil {
		spans, err = el.Failover(ctx, Nodes-1)
	}
	if serr := stop(); err == nil {
		err = serr
	}
	waited := time.Now()
	el.Wait()
	r.Logf("quiet phase %v (%v of it waiting for delayed bytes), then %v closing the candidates", waited.Sub(quiet).Round(time.Millisecond), el.Settled.Round(time.Millisecond), time.Since(waited).Round(time.Millisecond))
	if err != nil {
		return err
	}

	c := r.Checked()
	by := c.ByInvariant()
	h := el.History()
	cov := checker.Coverage{Window: workload.ObserveWindow(ttl), Spans: spans}
	vs := checker.CheckElection(h, cov, c.Intervals)
	r.Violations(checker.ElectionInvariants, vs)
	n := map[checker.Invariant]int{}
	for _, v := range vs {
		n[v.Invariant]++
	}
	firstOf := func(inv checker.Invariant) string {
		for _, v := range vs {
			if v.Invariant == inv {
				return "; first: " + v.String()
			}
		}
		return ""
	}
	crashes, resigns := 0, 0
	for _, l := range h.Leaders {
		switch l.How {
		case "crash":
			crashes++
		case "resign":
			resigns++
		}
	}
	r.Check("one leader per term", n[checker.OneLeaderPerTerm] == 0, "%d leaderships (%d in the random phase; %d resigned, %d crashed), %d terms shared or missing%s",
		len(h.Leaders), random, resigns, crashes, n[checker.OneLeaderPerTerm], firstOf(checker.OneLeaderPerTerm))
	r.Check("terms increase", n[checker.TermsIncrease] == 0, "%d leaders whose term did not exceed the one before%s", n[checker.TermsIncrease], firstOf(checker.TermsIncrease))
	r.Check("no two leaders at once", c.Safe(), "%d overlapping leaderships", len(c.Overlaps))
	writes, rejected := e.Resource("election").Counts()
	r.Check("actions fenced by term", n[checker.FencedActions] == 0, "%d actions (%d refused as stale), %d refused while their leader led%s",
		writes, rejected, n[checker.FencedActions], firstOf(checker.FencedActions))
	r.Check("Leader reads a quorum", n[checker.LeaderReadCurrent] == 0, "%d Leader reads answered a leader, %d of them stale%s",
		len(h.Reads), n[checker.LeaderReadCurrent], firstOf(checker.LeaderReadCurrent))
	got := 0
	for _, w := range h.Watches {
		got += len(w.Got)
	}
	r.Check("observers in term order", n[checker.ObserveOrder] == 0, "%d observers got %d leaders, %d out of order or twice%s",
		len(h.Watches), got, n[checker.ObserveOrder], firstOf(checker.ObserveOrder))
	r.Check("observers see true leaders", n[checker.ObserveTrue] == 0, "%d leaders got or read that no candidate made%s", n[checker.ObserveTrue], firstOf(checker.ObserveTrue))
	r.Check("observers skip no leader", n[checker.ObserveCoverage] == 0, "%d leader versions current for %v in the quiet phase %v and not delivered%s",
		n[checker.ObserveCoverage], cov.Window, spans, firstOf(checker.ObserveCoverage))
	var longest time.Duration
	for _, ho := range h.Handovers {
		next := time.Duration(-1)
		for _, l := range h.Leaders {
			if l.Start > ho.At && (next < 0 || l.Start < next) {
				next = l.Start
			}
		}
		if next >= 0 {
			longest = max(longest, next-ho.At)
		}
	}
	r.Check("leaders replaced", n[checker.LeaderReplaced] == 0, "%d handovers (quiet phase), %d not replaced within %v (the longest took %v)%s",
		len(h.Handovers), n[checker.LeaderReplaced], workload.ReplaceBound(ttl), longest.Round(time.Millisecond), firstOf(checker.LeaderReplaced))
	r.Check("renewed leaderships held", by[checker.RenewalHolds] == 0, "%d leaderships lost while no renewal failed for want of answers%s",
		by[checker.RenewalHolds], first(c, checker.RenewalHolds))
	r.Check("leadership contexts end by Until", by[checker.ContextWithinUntil] == 0, "%d leadership Contexts live more than %v past their lock's Until%s",
		by[checker.ContextWithinUntil], checker.ContextTolerance, first(c, checker.ContextWithinUntil))
	r.Check("fences increase", by[checker.FenceIncreases] == 0, "%d terms out of order in the history%s", by[checker.FenceIncreases], first(c, checker.FenceIncreases))
	// Leaders are fewer in the random phase than locks in the others: a
	// leadership lasts, five candidates split the vote, and a crashed
	// leader holds the lock for a TTL. Its liveness is checked in the
	// quiet phase (leaders replaced).
	r.Logf("%d leaderships in the %v random phase", random, d)
	r.Check("faults injected", e.Faults.Injected() > 0, "%d faults", e.Faults.Injected())
	return nil
}
