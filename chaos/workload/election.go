package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/guard"
	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/redlock"
)

// The election workload (redlock.Election): every client of the Env is a
// candidate, over its own transport, and an observer. A candidate
// campaigns with a value of its own (unique in the run), leads, acts on
// the fenced resource of the election with its term while its
// leadership's Context is live, proclaims a new value now and then, and
// resigns, or crashes: its Locker's nodes stop sending at once (crash.go),
// so that nothing is released and the renewal stops. Each campaign takes a
// Locker of its own, as a process would.
//
// A leadership is recorded in the History as a hold of the election's
// key: granted when Campaign returned, its token the term, its Until the
// lock's (the grant's upper bound, then every renewal's, which the
// Locker's observer notes), released when the leader resigned or crashed;
// its Context is watched (context-within-until, renewal-holds). So the
// interval checker judges two leaders at once as an overlap, and the
// second checker (porcupine) judges the same history.
//
// Every client also observes the election (Election.Observe over its own
// Locker, through its transport) for the whole run, and reads the leader
// (Election.Leader) every leaderReadEvery. checker.CheckElection judges
// what they recorded (ElectionHistory).

// ElectionConfig configures an Election workload.
type ElectionConfig struct {
	// Name is the election's name in the run (its key, the checker's).
	Name string
	// TTL is the election's TTL.
	TTL time.Duration
	// Seed draws the candidates' choices.
	Seed uint64
}

// Probabilities and pacing of the election workload.
const (
	pElectionCrash    = 0.25 // a leader crashes instead of resigning
	pElectionProclaim = 0.5  // a leader proclaims a new value mid-term
	leaderReadEvery   = 75 * time.Millisecond
)

// ObservePoll is the longest an observer of an election with ttl goes
// without reading its leader: redlock's observePoll (Election.Observe:
// a quarter of the ttl, at most a second).
func ObservePoll(ttl time.Duration) time.Duration {
	return min(max(ttl/4, 10*time.Millisecond), time.Second)
}

// ObserveWindow is the observation bound of an election with ttl: an
// observer must get every leader version that was current for a whole
// window of it (checker.Coverage): two polls and a read (the node
// timeout).
func ObserveWindow(ttl time.Duration) time.Duration { return 2*ObservePoll(ttl) + NodeTimeout }

// ReplaceBound is how soon a new leader must return from Campaign once a
// leader resigned or crashed, with a majority of the masters up and
// candidates campaigning: the TTL (a crashed leader's lock lives out its
// last renewal), the longest wait between two attempts of a Lock, and
// three node timeouts of margin (an attempt that meets a failed master,
// the announcement of the term).
func ReplaceBound(ttl time.Duration) time.Duration { return ttl + maxRetryCeiling + 3*NodeTimeout }

// Election is an election workload over the clients of an Env.
type Election struct {
	// Settled is how long Failover waited for what the faults delayed.
	Settled time.Duration

	e   *Env
	cfg ElectionConfig
	key string

	values  atomic.Int64
	pending sync.WaitGroup // crashed leaders' watches, Lockers closing

	mu  sync.Mutex
	rec checker.ElectionHistory
	// resigned are the candidates that resigned: their Lockers stay open
	// until Wait, as a process that resigned and runs on keeps its own
	// (a leadership whose Resign released nothing would stay renewed).
	resigned []*candidate
	// failed counts the campaigns that failed, by error.
	failed map[string]int
}

// NewElection returns the election workload cfg over e's clients.
func NewElection(e *Env, cfg ElectionConfig) *Election {
	return &Election{e: e, cfg: cfg, key: e.Key(cfg.Name),
		rec: checker.ElectionHistory{Key: cfg.Name, Campaigned: map[string]int64{}}}
}

// History returns what the candidates and observers recorded so far.
func (el *Election) History() checker.ElectionHistory {
	el.mu.Lock()
	defer el.mu.Unlock()
	h := el.rec
	h.Leaders = slices.Clone(h.Leaders)
	h.Reads = slices.Clone(h.Reads)
	h.Watches = slices.Clone(h.Watches)
	h.Actions = slices.Clone(h.Actions)
	h.Handovers = slices.Clone(h.Handovers)
	h.Campaigned = make(map[string]int64, len(el.rec.Campaigned))
	for k, v := range el.rec.Campaigned {
		h.Campaigned[k] = v
	}
	return h
}

// Wait closes the Lockers of the candidates that resigned, and waits
// until the crashed leaders' watches ended and every candidate's Locker
// closed (each bounded).
func (el *Election) Wait() {
	el.mu.Lock()
	resigned := el.resigned
	el.resigned = nil
	el.mu.Unlock()
	for _, cd := range resigned {
		cd.close()
	}
	el.pending.Wait()
}

func (el *Election) offset(t time.Time) time.Duration { return el.e.History.Offset(t) }

// newValue returns a value no campaign or Proclaim used before, noted as
// one of term (0: not known yet).
func (el *Election) newValue(client int, term int64) string {
	v := fmt.Sprintf("c%d-v%d", client, el.values.Add(1))
	el.mu.Lock()
	el.rec.Campaigned[v] = term
	el.mu.Unlock()
	return v
}

// Observe starts, for every client, an observer (Election.Observe) and a
// reader of the leader (Election.Leader every leaderReadEvery), each over
// the client's own Locker. stop ends them and records their watches.
func (el *Election) Observe(ctx context.Context) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range el.e.clients {
		oe, err := redlock.NewElection(c.Locker, el.key, el.cfg.TTL)
		if err != nil {
			g.Go(func() error { return fmt.Errorf("workload: election observer: %w", err) })
			continue
		}
		g.Go(guard.Go(func() error {
			w := checker.Watch{Client: c.ID, From: el.e.Now()}
			for ldr := range oe.Observe(gctx) {
				w.Got = append(w.Got, checker.Delivery{At: el.e.Now(), Term: ldr.Term, Value: ldr.Value})
			}
			w.To = el.e.Now()
			el.mu.Lock()
			el.rec.Watches = append(el.rec.Watches, w)
			el.mu.Unlock()
			return nil
		}))
		g.Go(guard.Go(func() error {
			for gctx.Err() == nil {
				rctx, rcancel := context.WithTimeout(gctx, 5*NodeTimeout)
				call := time.Now()
				ldr, err := oe.Leader(rctx)
				at := time.Now()
				rcancel()
				switch {
				case err == nil:
					el.mu.Lock()
					el.rec.Reads = append(el.rec.Reads, checker.Read{Client: c.ID, Call: el.offset(call), At: el.offset(at), Term: ldr.Term, Value: ldr.Value})
					el.mu.Unlock()
				case errors.Is(err, redlock.ErrInvalid):
					return fmt.Errorf("workload: Leader: %w", err)
				}
				select {
				case <-gctx.Done():
				case <-time.After(leaderReadEvery):
				}
			}
			return nil
		}))
	}
	return func() error {
		cancel()
		return g.Wait()
	}
}

// electionObserver is the Observer of one campaign's Locker: a
// holdObserver (renewals of the leadership) that also notes when the
// election's lock was granted, for the leadership's first Until.
type electionObserver struct {
	*holdObserver
	mu      sync.Mutex
	granted time.Time
}

func (o *electionObserver) Acquire(ev redlock.AcquireEvent) {
	if ev.Err == nil {
		now := time.Now()
		o.mu.Lock()
		o.granted = now
		o.mu.Unlock()
	}
	o.holdObserver.Acquire(ev)
}

func (o *electionObserver) grantedAt() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.granted
}

// candidate is one campaign of a client: a Locker of its own (that can
// crash) and its Election.
type candidate struct {
	el    *Election
	c     *Client
	l     *redlock.Locker
	obs   *electionObserver
	crash func()
	e     *redlock.Election
}

func (el *Election) candidate(c *Client) (*candidate, error) {
	crashed := new(atomic.Bool)
	nodes := make([]redlock.Node, len(c.nodes))
	for j, n := range c.nodes {
		nodes[j] = crashNode{Node: n, crashed: crashed}
	}
	o := &electionObserver{holdObserver: &holdObserver{observer: c.obs}}
	cfg := c.cfg
	cfg.Observer = o
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		return nil, fmt.Errorf("workload: a candidate's Locker: %w", err)
	}
	e, err := redlock.NewElection(l, el.key, el.cfg.TTL)
	if err != nil {
		return nil, fmt.Errorf("workload: NewElection: %w", err)
	}
	return &candidate{el: el, c: c, l: l, obs: o, crash: func() { crashed.Store(true) }, e: e}, nil
}

// close closes the candidate's Locker in the background (bounded).
func (cd *candidate) close() {
	cd.el.pending.Go(func() {
		ctx, cancel := context.WithTimeout(context.Background(), ReleaseTimeout)
		defer cancel()
		cd.l.Close(ctx)
	})
}

// leadership is a candidate's term, while it leads.
type leadership struct {
	cd   *candidate
	rec  checker.Leadership
	ctx  context.Context // the Election's Context
	stop func() time.Time
}

// campaign campaigns until ctx ends and records the leadership it won,
// or returns nil. Its error is a harness failure (a call refused as
// invalid).
func (cd *candidate) campaign(ctx context.Context) (*leadership, error) {
	el, env := cd.el, cd.el.e
	env.attempts.Add(1)
	value := el.newValue(cd.c.ID, 0)
	call := time.Now()
	err := cd.e.Campaign(ctx, value)
	ret := time.Now()
	if err != nil {
		if errors.Is(err, redlock.ErrInvalid) {
			return nil, fmt.Errorf("workload: Campaign: %w", err)
		}
		el.mu.Lock()
		if el.failed == nil {
			el.failed = map[string]int{}
		}
		el.failed[campaignError(err)]++
		el.mu.Unlock()
		return nil, nil
	}
	lctx := cd.e.Context()
	term := cd.e.Term()
	granted := cd.obs.grantedAt()
	if granted.IsZero() || granted.After(ret) {
		granted = ret
	}
	ttl := el.cfg.TTL
	until := granted.Add(ttl - clock.Drift(ttl, redlock.DefaultDriftFactor))
	id := env.History.GrantCall(checker.Event{Client: cd.c.ID, Key: el.cfg.Name, Token: max(term, 0), Renewed: true, TTL: ttl}, call, ret, until)
	cd.obs.bind(id)
	ld := &leadership{cd: cd, ctx: lctx, stop: cd.c.watchCtx(id, lctx),
		rec: checker.Leadership{Lock: id, Client: cd.c.ID, Term: term, Call: el.offset(call), Start: el.offset(ret),
			Versions: []checker.Version{{Value: value, Called: el.offset(call), From: el.offset(ret)}}}}
	if term == 0 {
		// Term reports none once the leadership was lost (its lock's
		// Until passed): then its Context ends by that Until. One that
		// stays live led without a term.
		select {
		case <-lctx.Done():
			ld.rec.Term = -1
		case <-time.After(2 * ttl):
		}
	}
	el.mu.Lock()
	el.rec.Campaigned[value] = ld.rec.Term
	el.mu.Unlock()
	return ld, nil
}

// campaignError names the kind of a failed Campaign's error.
func campaignError(err error) string {
	var q *redlock.QuorumError
	switch {
	case errors.As(err, &q):
		return fmt.Sprintf("%s: %d granted, %d refused, %d failed, %d pending, late %t", q.Op, q.Granted, q.Refused, q.Failed, q.Pending, q.Late)
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	}
	return err.Error()
}

// Failed describes the campaigns that failed, by error.
func (el *Election) Failed() string {
	el.mu.Lock()
	defer el.mu.Unlock()
	return fmt.Sprint(el.failed)
}

// act performs one action on the election's fenced resource with the
// term, if the leadership's Context is still live.
func (ld *leadership) act() {
	if ld.ctx.Err() != nil {
		return
	}
	env := ld.cd.el.e
	term := max(ld.rec.Term, 0)
	at := env.Now()
	ok := env.Resource(ld.cd.el.cfg.Name).Write(ld.cd.c.ID, term, at)
	ld.cd.el.mu.Lock()
	ld.cd.el.rec.Actions = append(ld.cd.el.rec.Actions, checker.Action{Client: ld.cd.c.ID, Lock: ld.rec.Lock, Term: term, At: at, Accepted: ok})
	ld.cd.el.mu.Unlock()
}

// hold leads for d, acting every TTL/4, or until the leadership's
// Context or ctx ends.
func (ld *leadership) hold(ctx context.Context, d time.Duration) {
	every := ld.cd.el.cfg.TTL / 4
	for end := time.Now().Add(d); ; {
		ld.act()
		left := time.Until(end)
		if left <= 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ld.ctx.Done():
			return
		case <-time.After(min(every, left)):
		}
	}
}

// proclaim proclaims a new value; from when it returned, the leader
// leads with it.
func (ld *leadership) proclaim(ctx context.Context) error {
	el := ld.cd.el
	v := el.newValue(ld.cd.c.ID, ld.rec.Term)
	called := el.e.Now()
	pctx, cancel := context.WithTimeout(ctx, 5*NodeTimeout)
	err := ld.cd.e.Proclaim(pctx, v)
	cancel()
	switch {
	case err == nil:
		ld.rec.Versions = append(ld.rec.Versions, checker.Version{Value: v, Called: called, From: el.e.Now()})
	case errors.Is(err, redlock.ErrInvalid):
		return fmt.Errorf("workload: Proclaim: %w", err)
	}
	return nil
}

// lost reports whether the leadership's Context ended (the lock was
// lost) before the leader gave it up.
func (ld *leadership) lost() bool { return ld.ctx.Err() != nil }

// resign ends the leadership by Resign (after a loss too: it releases
// what is left), and records it.
func (ld *leadership) resign() {
	el, env := ld.cd.el, ld.cd.el.e
	now := time.Now()
	ld.rec.End, ld.rec.How = el.offset(now), "resign"
	if ld.lost() {
		ld.rec.How = "lost"
	}
	env.History.Release(ld.rec.Lock, now)
	ctx, cancel := context.WithTimeout(context.Background(), ReleaseTimeout)
	err := ld.cd.e.Resign(ctx)
	cancel()
	if err == nil && ld.rec.How == "resign" {
		ld.rec.Resigned = env.Now()
	}
	ld.stop()
	ld.record()
	el.mu.Lock()
	el.resigned = append(el.resigned, ld.cd)
	el.mu.Unlock()
}

// crashOut ends the leadership by a crash of its candidate: nothing it
// sends reaches a master any more. A crashed process acts no more: its
// hold ends now. With actOn, the candidate is rather one cut off from
// every master (the same to the masters and to its Locker): it acts on
// until its leadership's Context ends, which must come by the lock's
// Until (context-within-until), and its hold ends then. Either way the
// Context is watched until it ends or 3 TTLs passed.
func (ld *leadership) crashOut(actOn bool) {
	el, env := ld.cd.el, ld.cd.el.e
	now := time.Now()
	ld.cd.crash()
	ld.rec.End, ld.rec.How = el.offset(now), "crash"
	if !actOn {
		env.History.Release(ld.rec.Lock, now)
	}
	ld.record()
	el.pending.Go(func() {
		if actOn {
			ld.hold(context.Background(), 3*el.cfg.TTL)
		} else {
			select {
			case <-ld.ctx.Done():
			case <-time.After(3 * el.cfg.TTL):
			}
		}
		end := ld.stop()
		if actOn {
			env.History.Release(ld.rec.Lock, end)
		}
		ld.cd.close()
	})
}

func (ld *leadership) record() {
	el := ld.cd.el
	el.mu.Lock()
	el.rec.Leaders = append(el.rec.Leaders, ld.rec)
	el.mu.Unlock()
}

// Run runs every client as a candidate until ctx ends: campaign (giving
// up after 2-6 TTLs, then again after up to a TTL), lead for 0.25-1 TTL acting on the
// resource, proclaim a new value mid-term half of the time, resign or
// (a quarter of the time) crash. faults, if set, run beside them.
func (el *Election) Run(ctx context.Context, faults fault.Schedule) error {
	g, gctx := errgroup.WithContext(ctx)
	if len(faults) > 0 {
		g.Go(guard.Go(func() error { return el.e.Faults.Run(gctx, faults) }))
	}
	ttl := el.cfg.TTL
	for _, c := range el.e.clients {
		rng := rand.New(rand.NewPCG(el.cfg.Seed, uint64(c.ID)+0xe1ec))
		between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo)+1)) }
		g.Go(guard.Go(func() error {
			for gctx.Err() == nil {
				cd, err := el.candidate(c)
				if err != nil {
					return err
				}
				cctx, cancel := context.WithTimeout(gctx, between(2*ttl, 6*ttl))
				ld, err := cd.campaign(cctx)
				cancel()
				if err != nil {
					return err
				}
				if ld == nil {
					cd.close()
					select { // as a restarted process would, a while later
					case <-gctx.Done():
					case <-time.After(between(0, ttl)):
					}
					continue
				}
				d := between(ttl/4, ttl)
				if rng.Float64() < pElectionProclaim {
					ld.hold(gctx, d/2)
					if !ld.lost() {
						if err := ld.proclaim(gctx); err != nil {
							return err
						}
					}
					d -= d / 2
				}
				ld.hold(gctx, d)
				if rng.Float64() < pElectionCrash && !ld.lost() {
					ld.crashOut(false)
				} else {
					ld.resign()
				}
			}
			return nil
		}))
	}
	return g.Wait()
}

// Failover runs the quiet phase (heal every fault first): once what the
// faults delayed on the clients' links arrived, master down is killed, so that a bare majority is up (4 of 5), then rounds in which
// client r's leadership ends and client r+1, campaigning since the round
// began, must take over within ReplaceBound: rounds 0, 2 and 4 by a
// crash (its Locker's nodes stop sending, and it acts on until its
// leadership's Context ends, as a leader cut off from every master
// would), round 1 by a Resign whose release cannot reach master 0 (the
// leader's link to it cut: master 0 keeps the old term, a minority that a
// Leader read must not believe), round 3 by a plain Resign. Each leader
// holds for an ObserveWindow and a margin (twice, with a Proclaim
// between, in rounds 1 and 3), acting on the resource. In round 3, an
// observer is cut off from two more masters for 3 observe polls mid-term
// (its reads fail), then healed: it must not get that leader again. It
// returns the spans over which the observers' coverage is judged: the
// phase, less the times a client is cut off from a master.
func (el *Election) Failover(ctx context.Context, down int) ([][2]time.Duration, error) {
	cls := el.e.clients
	ttl := el.cfg.TTL
	hold := ObserveWindow(ttl) + 50*time.Millisecond
	bound := ReplaceBound(ttl)
	// What the random phase delayed on the clients' links arrives first
	// (a pipelined connection's replies wait behind a delayed one).
	settle := time.Now()
	var wg sync.WaitGroup
	for _, c := range cls {
		wg.Go(func() { el.e.awaitDelivered(ctx, c.ID) })
	}
	wg.Wait()
	el.Settled = time.Since(settle)
	if err := el.e.Faults.Apply(ctx, fault.Fault{Kind: fault.Kill, Node: down}); err != nil {
		return nil, err
	}
	from := el.e.Now()
	spans := [][2]time.Duration{}
	// The first leader: nobody else campaigns.
	first, err := el.candidate(cls[0])
	if err != nil {
		return nil, err
	}
	// The first leader may wait for a master that the restart guard still
	// holds back (restart-kept, late in the random phase: the TTL and the
	// second by which uptime is rounded), and for the random phase's
	// leftovers to expire.
	el.handover(checker.Handover{Client: -1, How: "start of the quiet phase", At: el.e.Now(), Bound: bound + ttl + time.Second})
	fctx, cancel := context.WithTimeout(ctx, bound+ttl+2*time.Second)
	ld, err := first.campaign(fctx)
	cancel()
	if err != nil || ld == nil {
		first.close()
		return append(spans, [2]time.Duration{from, el.e.Now()}), err
	}
	rounds := max(len(cls), 5)
	for r := range rounds {
		next, err := el.candidate(cls[(r+1)%len(cls)])
		if err != nil {
			return nil, err
		}
		type won struct {
			ld  *leadership
			err error
		}
		result := make(chan won, 1)
		nctx, ncancel := context.WithTimeout(ctx, 3*hold+bound+time.Second)
		go func() {
			l, err := next.campaign(nctx)
			result <- won{l, err}
		}()
		ld.hold(ctx, hold)
		if r == 3 && len(cls) > 2 {
			// An observer's reads fail for a while (its links to two
			// more masters cut), mid-term: once healed, it must not get
			// the same leader again.
			o := cls[(r+3)%len(cls)].ID
			spans = append(spans, [2]time.Duration{from, el.e.Now()})
			if err := el.blind(ctx, o, 3*ObservePoll(ttl), 1, 2); err != nil {
				ncancel()
				return nil, err
			}
			from = el.e.Now()
			// The same leader, unchanged, while the observer reads it
			// again: a Proclaim right after the heal could wake it to the
			// new value first, and hide a redelivery of the old one.
			time.Sleep(2*ObservePoll(ttl) + NodeTimeout)
		}
		if r == 1 || r == 3 {
			if err := ld.proclaim(ctx); err != nil {
				ncancel()
				return nil, err
			}
			ld.hold(ctx, hold)
		}
		var cut *fault.Fault
		switch r {
		case 1:
			cut = &fault.Fault{Kind: fault.Cut, Node: 0, Clients: []int{ld.cd.c.ID}}
			spans = append(spans, [2]time.Duration{from, el.e.Now()})
			if err := el.e.Faults.Apply(ctx, *cut); err != nil {
				ncancel()
				return nil, err
			}
			fallthrough
		case 3:
			el.handover(checker.Handover{Client: ld.cd.c.ID, Term: ld.rec.Term, How: "resign", At: el.e.Now(), Bound: bound})
			ld.resign()
		default:
			el.handover(checker.Handover{Client: ld.cd.c.ID, Term: ld.rec.Term, How: "crash", At: el.e.Now(), Bound: bound})
			ld.crashOut(true)
		}
		w := <-result
		ncancel()
		if cut != nil {
			// Let the readers meet master 0's stale term beside the new
			// one, then heal the cut (the held release lands).
			time.Sleep(4 * leaderReadEvery)
			heal := *cut
			heal.Kind = fault.Heal
			if err := el.e.Faults.Apply(ctx, heal); err != nil {
				return nil, err
			}
			from = el.e.Now()
		}
		if w.err != nil || w.ld == nil {
			next.close()
			return append(spans, [2]time.Duration{from, el.e.Now()}), w.err
		}
		ld = w.ld
	}
	ld.hold(ctx, hold)
	spans = append(spans, [2]time.Duration{from, el.e.Now()})
	ld.resign()
	return spans, nil
}

// blind cuts client's links to masters for d, then heals them.
func (el *Election) blind(ctx context.Context, client int, d time.Duration, masters ...int) error {
	for _, j := range masters {
		if err := el.e.Faults.Apply(ctx, fault.Fault{Kind: fault.Cut, Node: j, Clients: []int{client}}); err != nil {
			return err
		}
	}
	time.Sleep(d)
	for _, j := range masters {
		if err := el.e.Faults.Apply(ctx, fault.Fault{Kind: fault.Heal, Node: j, Clients: []int{client}}); err != nil {
			return err
		}
	}
	return nil
}

func (el *Election) handover(h checker.Handover) {
	el.mu.Lock()
	el.rec.Handovers = append(el.rec.Handovers, h)
	el.mu.Unlock()
}
