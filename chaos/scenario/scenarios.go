package scenario

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// All returns every scenario, in the order the suite runs them.
func All() []Scenario {
	return slices.Concat(classic(), safeScenarios(), commandScenarios(), protections(), matrix(), absenceScenarios(), lifecycleScenarios(), electionScenarios())
}

// classic are the first nine scenarios, on fenced locks.
func classic() []Scenario {
	return []Scenario{
		{
			Name:      "safe-minority",
			Invariant: "no two clients hold a key at once while a random minority of the masters is killed, paused, cut off, slowed, restarted with its data, loses its scripts or gets or answers commands late; clients keep acquiring",
			Expect:    "0 overlaps; the clients keep acquiring, no stall over 3s",
			run:       safeMinority,
		},
		{
			Name:      "majority-down",
			Invariant: "no lock is granted without a quorum, and failed attempts leave no key behind",
			Expect:    "0 grants while 3 of 5 masters are unreachable; 0 keys left; a lock is granted once they are back",
			run:       majorityDown,
		},
		{
			Name:      "split-vote",
			Invariant: "clients that start at the same instant get at most one holder, and someone makes progress",
			Expect:    "first attempts split the vote; at most one winner per start; every round grants the lock (the report gives how long the first grant took); 0 overlaps",
			run:       splitVote,
		},
		{
			Name:        "restart-unsafe",
			Unsafe:      true,
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across the restart, without persistence and without delay, of a master two quorums share (the Redlock spec's case), with the restart guard off (RestartGuard -1) for a client that saw the master before",
			Expect:      "overlap produced and detected: the restarted master forgot the first lock and granted it again; restart-guarded is the same restart with the guard on",
			run:         shared{ttl: 10 * time.Second, disrupt: restartAtOnce, guard: -1, warm: true}.run,
		},
		{
			Name:        "restart-aof",
			Persistence: cluster.PersistenceAOF,
			Invariant:   "mutual exclusion across the same restart with AOF and appendfsync always",
			Expect:      "0 overlaps: the restarted master still holds the first lock; the second client gets it after the release",
			run:         sharedNode(3*time.Second, restartAtOnce),
		},
		{
			Name:        "restart-delayed",
			Persistence: cluster.PersistenceNone,
			Invariant:   "mutual exclusion across the same restart without persistence, delayed by the TTL, of a key in use (A locked it 40 times before on masters 0-2); fencing tokens increase across the restart",
			Expect:      "0 overlaps: the master comes back empty only after the first lock expired; B's token above every token of A's",
			run: shared{ttl: time.Second, history: restartHistory,
				disrupt: func(ttl time.Duration) fault.Fault { return fault.Fault{Kind: fault.Restart, Node: 2, Arg: ttl} }}.run,
		},
		{
			Name:      "clock-jump",
			Unsafe:    true,
			Invariant: "mutual exclusion when the clock of a master two quorums share jumps forward by the TTL",
			Expect:    "overlap produced and detected: the jump expired the first lock on the shared master early",
			run:       sharedNode(10*time.Second, func(ttl time.Duration) fault.Fault { return fault.Fault{Kind: fault.ClockJump, Node: 2, Arg: ttl} }),
		},
		{
			Name:      "paused-holder",
			Invariant: "a fenced resource rejects the write of a holder that was paused past its TTL while another client took the lock",
			Expect:    "0 overlaps (the paused lock had expired); the stale write is rejected",
			run:       pausedHolder,
		},
		{
			Name:      "paused-client",
			Invariant: "a client paused after sending its SETs and before reading the replies, for longer than the TTL, does not take the lock",
			Expect:    "not acquired, both when its node timeout gives up on the frozen replies and when the replies come in time but elapsed > validity; 0 overlaps",
			run:       pausedClient,
		},
	}
}

// Lookup returns the scenario called name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range All() {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// safeMinority runs the workload while a random schedule, drawn from the
// seed, faults at most two of the five masters at a time.
func safeMinority(ctx context.Context, r *Run) error {
	const ttl = 500 * time.Millisecond
	e, err := r.Env(ctx, workload.EnvConfig{Clients: r.Clients(), Transport: r.Transports(), Seed: r.Seed})
	if err != nil {
		return err
	}
	// Killed masters without persistence must stay down for a TTL to be
	// safe; with AOF they may come back at once.
	var downFor time.Duration
	if !e.Cluster.Nodes()[0].Persistent() {
		downFor = ttl
	}
	d := r.Duration(1, time.Second)
	sched := fault.Random(r.Seed, fault.RandomConfig{
		Nodes: Nodes, Clients: r.Clients(), Duration: d, DownFor: downFor, Rejoin: rejoin(workload.LongestTTL(ttl)),
		Kinds:   append([]fault.Kind{fault.Kill, fault.Pause, fault.Cut, fault.Slow, fault.Restart}, fault.Generic...),
		Gap:     150 * time.Millisecond,
		Hold:    400 * time.Millisecond,
		Latency: 20 * time.Millisecond,
	})
	r.Logf("%d faults scheduled over %v, at most 2 masters faulty at once; killed masters stay down >= %v",
		sched.Injections(), d, downFor)

	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	// Faults that run late (slow container starts) stop with the workload;
	// the run heals whatever they left.
	from := e.Now()
	if err := workload.Run(wctx, e, workload.Config{Keys: 2, TTL: ttl, Hold: 2 * time.Millisecond, Faults: sched, Seed: r.Seed}); err != nil {
		return err
	}
	to := e.Now()

	c := r.Checked()
	r.Check("no overlap", c.Safe(), "%d overlaps among %d acquisitions", len(c.Overlaps), len(c.Intervals))
	// Redlock promises no fairness, so one client may starve for a while:
	// the clients as a whole must keep acquiring.
	least := int(d / (200 * time.Millisecond))
	r.Check("clients keep acquiring", len(c.Intervals) >= least, "%d acquisitions in %v (at least %d), per client %v",
		len(c.Intervals), d, least, perClient(c, r.Clients()))
	gap := longestGap(c, from, to)
	r.Check("no stall", gap <= 3*time.Second, "longest time without a grant: %v", gap.Round(time.Millisecond))
	r.Check("faults injected", e.Faults.Injected() > 0, "%d faults", e.Faults.Injected())
	return nil
}

// acquire is the first acquisition of a scripted scenario, on a free key:
// it retries for up to 5s, as connections are made on the way.
func acquire(ctx context.Context, c *workload.Client, name string, ttl time.Duration) (*workload.Held, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return c.Acquire(ctx, name, ttl, false)
}

// errText is err's message, or "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// perClient counts the acquisitions of each client.
func perClient(c checker.Result, clients int) []int {
	n := make([]int, clients)
	for _, iv := range c.Intervals {
		n[iv.Client]++
	}
	return n
}

// longestGap is the longest time in [from, to] without a grant.
func longestGap(c checker.Result, from, to time.Duration) time.Duration {
	starts := []time.Duration{from, to}
	for _, iv := range c.Intervals {
		starts = append(starts, iv.Start)
	}
	slices.Sort(starts)
	var gap time.Duration
	for i := 1; i < len(starts); i++ {
		gap = max(gap, starts[i]-starts[i-1])
	}
	return gap
}

// majorityDown kills two masters and cuts a third off from every client.
func majorityDown(ctx context.Context, r *Run) error {
	const ttl = 500 * time.Millisecond
	e, err := r.Env(ctx, workload.EnvConfig{Clients: r.Clients()})
	if err != nil {
		return err
	}
	// Each client first locks and releases a key of its own with every
	// master up, as a running service has: its restart guard has met the
	// masters, so what refuses the attempts below is the quorum, not the
	// guard's refusal to take a deployment read on two masters for a
	// fresh one (which hides a quorum of N/2).
	for i := range r.Clients() {
		h, err := acquire(ctx, e.Client(i), fmt.Sprintf("warm%d", i), ttl)
		if err != nil {
			return fmt.Errorf("scenario: client %d's warm-up lock: %w", i, err)
		}
		h.Release(ctx)
	}
	warm := e.Counts().Acquired
	if err := r.Apply(ctx,
		fault.Fault{Kind: fault.Kill, Node: 0},
		fault.Fault{Kind: fault.Kill, Node: 1},
		fault.Fault{Kind: fault.Cut, Node: 2},
	); err != nil {
		return err
	}
	d := r.Duration(10, time.Second)
	wctx, cancel := context.WithTimeout(ctx, d)
	err = workload.Run(wctx, e, workload.Config{Keys: 2, TTL: ttl, Wait: 300 * time.Millisecond, Seed: r.Seed})
	cancel()
	if err != nil {
		return err
	}
	n := e.Counts()
	n.Acquired -= warm
	r.Check("no lock granted without a quorum", n.Acquired == 0, "%d granted in %d attempts over %v", n.Acquired, n.Attempts, d)
	r.Check("clients tried", n.Attempts > 0, "%d attempts", n.Attempts)

	// Every failed attempt released what it got on the masters that answered.
	live := e.Cluster.Nodes()[2:]
	left, err := e.AwaitNoKeys(ctx, 3*time.Second, live...)
	if err != nil {
		return err
	}
	r.Check("no key left behind", left == 0, "%d keys of the run on the live masters", left)

	if err := e.Faults.HealAll(ctx); err != nil {
		return err
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	h, err := e.Client(0).Acquire(lctx, "k0", ttl, false)
	r.Check("granted again once the masters are back", err == nil, "%s", errText(err))
	if err == nil {
		h.Write()
		h.Release(ctx)
	}
	// What the cut master was sent is delivered now, releases included;
	// anything else would expire within the TTL.
	left, err = e.AwaitNoKeys(ctx, ttl+3*time.Second)
	if err != nil {
		return err
	}
	r.Check("no key left on any master afterwards", left == 0, "%d keys of the run", left)
	return nil
}

// splitVote starts five clients at the same instant, round after round.
// Each client is closest to "its own" master and 20ms further from each next
// one, so each master sees a different client first: first attempts split
// the vote, and only the retries (spread by the jittered backoff) decide.
func splitVote(ctx context.Context, r *Run) error {
	const (
		ttl  = 2 * time.Second
		step = 20 * time.Millisecond
	)
	e, err := r.Env(ctx, workload.EnvConfig{
		Clients: Nodes,
		Locker:  func(int) redlock.Config { return workload.LockerConfig(250 * time.Millisecond) },
	})
	if err != nil {
		return err
	}
	// Every client reads and writes the masters' records before the
	// rounds (its restart guard's first round), so that its first
	// attempt of a round starts when the round does.
	for _, c := range e.Clients() {
		if err := register(ctx, e, c, ttl); err != nil {
			return err
		}
	}
	for c := range Nodes {
		for i := range Nodes {
			if lat := step * time.Duration((i-c+Nodes)%Nodes); lat > 0 {
				if err := r.Apply(ctx, fault.Fault{Kind: fault.Slow, Node: i, Clients: []int{c}, Arg: lat}); err != nil {
					return err
				}
			}
		}
	}
	var (
		rounds, splits, crowded, stuck, incomplete int
		firstGrant                                 []time.Duration // per round, from the start
	)
	for deadline := time.Now().Add(r.Duration(3, 2*time.Second)); time.Now().Before(deadline) && ctx.Err() == nil; rounds++ {
		// Start from empty masters: the last release of the previous round
		// may still be on its way to the furthest ones.
		if left, err := e.AwaitNoKeys(ctx, 3*time.Second); err != nil || left > 0 {
			return fmt.Errorf("scenario: %d keys still held before round %d: %v", left, rounds, err)
		}
		var (
			first, got atomic.Int32
			mu         sync.Mutex
			earliest   time.Duration = -1
		)
		start := make(chan struct{})
		t0 := time.Now()
		var wg sync.WaitGroup
		for _, c := range e.Clients() {
			wg.Go(func() {
				<-start
				h, err := c.Acquire(ctx, "k", ttl, true)
				if err == nil {
					first.Add(1)
				} else {
					lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					h, err = c.Acquire(lctx, "k", ttl, false)
					cancel()
				}
				if err != nil {
					return
				}
				mu.Lock()
				if at := time.Since(t0); earliest < 0 || at < earliest {
					earliest = at
				}
				mu.Unlock()
				got.Add(1)
				h.Write()
				h.Release(ctx)
			})
		}
		close(start)
		wg.Wait()
		switch first.Load() {
		case 0:
			splits++
		case 1:
		default:
			crowded++
		}
		switch {
		case got.Load() == 0:
			stuck++
		case got.Load() < Nodes:
			incomplete++
		}
		if earliest >= 0 {
			firstGrant = append(firstGrant, earliest)
		}
	}
	c := r.Checked()
	r.Check("no overlap", c.Safe(), "%d overlaps", len(c.Overlaps))
	r.Check("at most one winner per simultaneous start", crowded == 0, "%d of %d rounds had several first-attempt winners", crowded, rounds)
	r.Check("split votes happened", splits > 0, "%d of %d rounds: no first attempt won", splits, rounds)
	slowest := time.Duration(0)
	if len(firstGrant) > 0 {
		slowest = slices.Max(firstGrant)
	}
	r.Check("someone makes progress", rounds > 0 && stuck == 0,
		"%d of %d rounds granted nobody within 5s; first grant of a round after %v at worst; %d rounds left some client without the lock within 5s",
		stuck, rounds, slowest.Round(time.Millisecond), incomplete)
	return nil
}

// pausedHolder pauses a holder past its TTL while another client takes the
// lock and writes, then lets it write; then runs the workload with holders
// that pause past their TTL now and then.
func pausedHolder(ctx context.Context, r *Run) error {
	const ttl = 300 * time.Millisecond
	e, err := r.Env(ctx, workload.EnvConfig{Clients: max(2, r.Clients())})
	if err != nil {
		return err
	}
	a, b := e.Client(0), e.Client(1)
	ha, err := acquire(ctx, a, "k0", ttl)
	if err != nil {
		return fmt.Errorf("scenario: client A could not lock: %w", err)
	}
	wrote := make(chan bool, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		hb, err := b.Acquire(lctx, "k0", ttl, false)
		if err != nil {
			wrote <- false
			return
		}
		wrote <- hb.Write()
		hb.Release(ctx)
	})
	e.Pause(0, 2*ttl) // A is frozen past its TTL...
	bWrote := <-wrote // ...while B takes the lock and writes
	aAccepted := ha.Write()
	ha.Release(ctx)
	wg.Wait()
	r.Check("B acquires and writes while A is paused", bWrote, "")
	r.Check("A's stale write is rejected", !aAccepted, "A wrote with token %d after its validity", ha.Token)

	d := r.Duration(3, time.Second)
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	if err := workload.Run(wctx, e, workload.Config{Keys: 1, TTL: ttl, Hold: 2 * time.Millisecond,
		PausePastTTL: 0.05, PauseFor: 2 * ttl, Seed: r.Seed}); err != nil {
		return err
	}
	c := r.Checked()
	n := e.Counts()
	r.Check("no overlap", c.Safe(), "%d overlaps: a paused holder's lock ends at its Until", len(c.Overlaps))
	r.Check("stale writes rejected", n.Rejected > 0, "%d of %d late writes rejected", n.Rejected, n.Late)
	return nil
}
