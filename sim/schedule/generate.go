package schedule

import (
	"math/rand/v2"
	"slices"
	"time"
)

// Options shape the schedules Generate draws.
type Options struct {
	// Horizon is how long the clients start operations; 0 means drawn
	// from 2s to 6s.
	Horizon time.Duration
	// Kinds restricts the operations (nil: all of them, a few per
	// schedule).
	Kinds []Kind
	// Faults restricts the faults (nil: all).
	Faults []FaultKind
	// Unsafe allows faults outside the library's assumptions.
	Unsafe bool
	// Masters fixes the number of masters (0: 3 or 5).
	Masters int
	// NoFaults draws no faults; NoPrivate no operations on private keys.
	NoFaults, NoPrivate bool
	// TightRenewals lets renewed locks (Renew, Do) have TTLs close to
	// the time a round takes, where the library's renewal comes too late
	// (see the README's findings).
	TightRenewals bool
	// Theme forces a theme: "plain" (faults anywhere) or "split" (each
	// client reaches a quorum of its own, and the masters they share
	// fail); "" draws one.
	Theme string
	// FencedResume lets hand-overs be of fenced locks (whose resumed
	// token came out below the giver's after a failover until the
	// resume seeded its counter from the master's clock; see the
	// README's findings). The command sets it by default.
	FencedResume bool
	// Persist, when not "", gives every master this persistence
	// ("none", "everysec" or "always") instead of a drawn one (drawn all
	// the same, so that the seed's other draws stay as they were).
	Persist string
	// NoWarmup (split theme): the clients do not first record the
	// schedule's longest TTL on the masters they reach, so that a client
	// may never learn another's longer TTL (see the README's findings).
	NoWarmup bool
}

const ms = time.Millisecond

// gen draws one schedule.
type gen struct {
	r    *rand.Rand
	o    Options
	s    *Schedule
	long time.Duration // the longest TTL any operation uses
	// split theme: tmax is the schedule's longest TTL; reach[c] the
	// masters client c reaches.
	tmax   time.Duration
	ctmax  time.Duration // split: the TTL of the client whose operations are drawn
	reach  [][]int
	shared []int // masters more than one client reaches
	// longExtends: Extends may go past tmax (every pair of clients shares
	// two masters).
	longExtends bool
	// emax: split, the longest TTL an Extend may ask for (tmax, or the
	// warm-up's Extend's).
	emax time.Duration
	// late are the clients that start late; starts every client's start.
	late   []int
	starts []time.Duration
}

// Generate draws a schedule from seed.
func Generate(seed uint64, o Options) *Schedule {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x51ed)), o: o, s: &Schedule{Seed: seed, Unsafe: o.Unsafe, Theme: o.Theme}}
	if g.s.Theme == "" {
		g.s.Theme = "plain"
		if g.chance(0.3) {
			g.s.Theme = "split"
		}
	}
	g.config()
	g.ops()
	g.faults()
	g.contend(seed)
	return g.s
}

// contend marks half of the read operations on private keys as contended
// by the client's own writer (Op.Contend). It draws from a stream of its
// own, so that everything else a seed draws stays as it was.
func (g *gen) contend(seed uint64) {
	r := rand.New(rand.NewPCG(seed, 0xc0de))
	for c := range g.s.Ops {
		for j := range g.s.Ops[c] {
			if o := &g.s.Ops[c][j]; o.Kind == Read && o.Key < 0 && r.Float64() < 0.5 {
				o.Contend = true
			}
		}
	}
}

func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

func (g *gen) between(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return lo + time.Duration(g.r.Int64N(int64(hi-lo)))
}

// config draws the masters, the library's configuration and the network.
func (g *gen) config() {
	s := g.s
	n := g.o.Masters
	if n == 0 {
		n = 3
		if g.chance(0.4) {
			n = 5
		}
	}
	replicas := g.chance(0.25)
	if s.Theme == "split" {
		replicas = g.chance(0.45) // failovers are among the split's faults
	}
	local := g.chance(0.15)
	for range n {
		m := Master{ReplicaLag: -1, FsyncPhase: Duration(g.between(0, time.Second))}
		switch x := g.r.Float64(); {
		case local || x < 0.35:
			m.Persist = "everysec"
			if g.chance(0.3) {
				m.Persist = "always"
			}
		case x < 0.5:
			m.Persist = "always"
		default:
			m.Persist = "none"
		}
		if g.o.Persist != "" {
			m.Persist = g.o.Persist
		}
		// Clocks disagree by less than a restart takes, and run within
		// the drift allowance (1%).
		m.ClockOffset = Duration(g.between(-20*ms, 20*ms))
		m.ClockRate = 1 + (g.r.Float64()-0.5)*0.01
		if replicas {
			m.ReplicaLag = Duration(g.between(0, 300*ms))
		}
		s.Masters = append(s.Masters, m)
	}
	s.Clients = 2 + g.r.IntN(3)
	if s.Theme == "split" {
		s.Clients = 2 + g.r.IntN(2)
		g.tmax = g.between(max(s.minTTL(), time.Second), max(s.minTTL()*2, 4*time.Second)).Truncate(ms)
		g.split(n)
	}
	s.Lib.Guard = "default"
	switch x := g.r.Float64(); {
	case x < 0.15:
		s.Lib.Guard = "strict"
		s.Lib.Strict = Duration(g.between(500*ms, 3*time.Second))
	case x < 0.25 && (g.allAlways() || g.o.Unsafe):
		s.Lib.Guard = "off"
	case x < 0.35:
		// The guard off, as for masters that operations keep down for
		// the longest TTL after a restart (Config.RestartGuard < 0):
		// every restart that loses data is delayed so (faults).
		s.Lib.Guard, s.Lib.Delayed = "off", true
	}
	s.Lib.Local = local
	if replicas && g.chance(0.6) {
		s.Lib.Replicas = 1
		if s.Theme == "split" {
			// Locks that outlive a grant's wait for its replica (up to
			// the durable timeout, 2s) and the next one's.
			g.tmax = g.between(4*time.Second, 7*time.Second).Truncate(ms)
		}
	}
	if (s.Lib.Local || s.Lib.Replicas > 0) && g.chance(0.4) {
		s.Lib.Undurable = 1 + g.r.IntN(s.Clients-1)
	}
	if g.chance(0.3) {
		s.Lib.NodeTimeout = Duration(g.between(10*ms, 120*ms))
	}
	s.Lib.NoWake = g.chance(0.15)
	s.Lib.Fencing = g.chance(0.5)
	if s.Theme == "split" && g.chance(0.15) {
		// One master refuses INFO (an ACL without it): the guard cannot
		// judge it, and its grants must not count.
		s.Masters[g.r.IntN(n)].NoInfo = true
	}
	// The network is faster than the node timeout, as deployments set it
	// (slower links are what the Delay fault is for).
	s.Net.DelayMin = Duration(g.between(20*time.Microsecond, time.Millisecond))
	s.Net.DelayMax = s.Net.DelayMin + Duration(g.between(0, min(15*ms, s.nodeTimeout()/5)))
	s.Net.FIFO = g.chance(0.5)
	if g.chance(0.5) {
		// The Node's stall timeout, the moment it fails a call whose
		// reply has not come (the library then knows the call failed,
		// while its command may still land): half of them a few node
		// timeouts, so that calls given up on and landing later are
		// common within a lock's TTL, not only within the longest.
		s.Net.Stall = Duration(g.between(150*ms, 2*time.Second))
		if g.chance(0.5) {
			s.Net.Stall = Duration(g.between(150*ms, 500*ms))
		}
	}
	s.Horizon = Duration(g.o.Horizon)
	if s.Horizon == 0 {
		s.Horizon = Duration(g.between(2*time.Second, 6*time.Second))
	}
	s.Keys = map[Kind]int{}
}

func (g *gen) allAlways() bool {
	for _, m := range g.s.Masters {
		if m.Persist != "always" {
			return false
		}
	}
	return true
}

// nodeTimeout is the library's node timeout in s.
func (s *Schedule) nodeTimeout() time.Duration {
	if s.Lib.NodeTimeout > 0 {
		return s.Lib.NodeTimeout.D()
	}
	return 50 * ms
}

// stall is the Node's stall timeout in s.
func (s *Schedule) stall() time.Duration {
	if s.Net.Stall > 0 {
		return s.Net.Stall.D()
	}
	return time.Second
}

// minTTL is the shortest TTL that can give a lock in s: above the node
// timeout, and above what a durable confirmation can take.
func (s *Schedule) minTTL() time.Duration {
	t := 2*s.nodeTimeout() + 10*ms
	if s.Lib.Local || s.Lib.Replicas > 0 {
		t = max(t, 1200*ms) // a grant waits for its confirmation (up to an fsync, a second)
	}
	return t
}

// ttl draws a TTL: mostly short, now and then long (so that what a call
// leaves behind stays visible).
func (g *gen) ttl() time.Duration {
	if g.tmax > 0 {
		// Split: each client has a TTL of its own, mostly (clients that
		// lock for different lengths of time; the warm-up records the
		// longest of all).
		if g.chance(0.7) {
			return g.ctmax
		}
		return g.between(g.s.minTTL(), g.tmax).Truncate(ms)
	}
	lo := g.s.minTTL()
	var t time.Duration
	switch x := g.r.Float64(); {
	case x < 0.7:
		t = g.between(lo, max(lo*3, 800*ms))
	case x < 0.9:
		t = g.between(lo, max(lo*2, 2*time.Second))
	default:
		t = g.between(3*time.Second, 8*time.Second)
	}
	return t.Truncate(ms)
}

// ops draws every client's operations.
func (g *gen) ops() {
	s := g.s
	kinds := g.o.Kinds
	if len(kinds) == 0 {
		// A few kinds per schedule: the exploration covers them all over
		// many schedules, and each schedule contends on its own.
		all := slices.Clone(Kinds)
		g.r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		kinds = all[:1+g.r.IntN(3)]
		if s.Theme == "split" && !slices.Contains(kinds, Plain) && !slices.Contains(kinds, Fenced) {
			// What a shared master forgets is a plain or fenced lock's.
			kinds = append(kinds, []Kind{Plain, Fenced}[g.r.IntN(2)])
		}
	}
	for _, k := range kinds {
		s.Keys[k] = 1 + g.r.IntN(2)
		if k == Multi {
			s.Keys[k] = 3 + g.r.IntN(2)
		}
		if k == Read || k == Write {
			s.Keys[Read], s.Keys[Write] = s.Keys[k], s.Keys[k]
		}
	}
	ops := make([][]Op, s.Clients)
	ownerSeq := 0
	g.emax = g.tmax
	if s.Theme == "split" && !g.o.NoWarmup {
		s.Warmup = Duration(g.tmax)
		g.long = max(g.long, g.tmax) // the warm-up locks are locks too
		if !g.longExtends && g.chance(0.5) {
			// Extends go past every acquire's TTL; the warm-up lock's
			// Extend is what tells each client's guard the longest.
			g.emax = (g.tmax + g.between(time.Second, 2*g.tmax)).Truncate(ms)
			s.WarmupExtend = Duration(g.emax)
			g.long = max(g.long, g.emax)
		}
	}
	for c := range s.Clients {
		t := g.between(0, 100*ms)
		if s.Theme == "split" && c > 0 && g.chance(0.35) {
			// A process that starts later, and first meets the masters
			// after some of them failed.
			t = g.between(500*ms, 2*time.Second)
			g.late = append(g.late, c)
		}
		g.starts = append(g.starts, t)
		if g.tmax > 0 {
			g.ctmax = g.tmax
			if c > 0 {
				g.ctmax = g.between(g.s.minTTL(), g.tmax).Truncate(ms)
			}
		}
		for t < s.Horizon.D() {
			k := kinds[g.r.IntN(len(kinds))]
			o := g.op(c, k, &ownerSeq)
			o.At = Duration(t)
			ops[c] = append(ops[c], o)
			t += o.Wait.D()/2 + o.Hold.D() + g.between(0, 300*ms)
		}
	}
	s.Ops = ops
}

// op draws one operation of kind k for client c.
func (g *gen) op(c int, k Kind, ownerSeq *int) Op {
	s := g.s
	o := Op{Kind: k, Key: g.r.IntN(max(s.Keys[k], 1))}
	if !g.o.NoPrivate && s.Theme != "split" && g.chance(0.2) && k != Resume {
		o.Key = -1
	}
	o.TTL = Duration(g.ttl())
	if (k == Renew || k == Do) && !g.o.TightRenewals {
		// A renewal goes out when two thirds of the TTL are left before
		// Until (timed from Until since the README's second finding), and
		// must return within them: renewed locks get TTLs that leave a
		// round (a node timeout and the links' delays) that room, twice
		// over. TightRenewals draws TTLs closer to the round's time.
		o.TTL = max(o.TTL, Duration(3*(s.nodeTimeout()+2*s.Net.DelayMax.D())))
		if s.Lib.Local || s.Lib.Replicas > 0 {
			// Each renewal waits for its confirmation (up to an fsync,
			// a second; or the replica's lag): one must fit in two
			// thirds of the TTL.
			o.TTL = max(o.TTL, Duration(3*time.Second))
		}
		if g.tmax > 0 {
			o.TTL = min(o.TTL, Duration(g.tmax))
		}
	}
	if o.Key == -1 {
		// A private key's leftovers are checked once the call settled:
		// a TTL that outlives the check shows them.
		o.TTL = Duration(g.between(4*time.Second, 9*time.Second).Truncate(ms))
	}
	g.long = max(g.long, o.TTL.D())
	ttl := o.TTL.D()
	o.Try = g.chance(0.35)
	o.Wait = Duration(g.between(10*ms, 3*time.Second))
	if g.chance(0.2) {
		o.Wait = Duration(g.between(0, 4*s.nodeTimeout())) // ends in an attempt or just after
	}
	o.Hold = Duration(g.between(0, ttl*6/5))
	o.EndedUnlock = g.chance(0.12)
	o.Watch = g.chance(0.25)
	if o.Key < 0 && g.chance(0.3) {
		switch k {
		case Plain, Fenced, Read, Write, Fair, Semaphore, Renew:
			o.Exit = true
		}
	}
	extends := func() {
		for n := g.r.IntN(4); n > 0 && g.chance(0.6); n-- {
			e := Extend{After: Duration(g.between(0, o.Hold.D()+1)), TTL: Duration(g.between(max(ttl/4, s.minTTL()), 3*ttl).Truncate(ms))}
			if g.tmax > 0 && !g.longExtends {
				e.TTL = min(e.TTL, Duration(g.emax))
			}
			e.Along = len(o.Extends) > 0 && g.chance(0.4)
			e.Ended = g.chance(0.1)
			g.long = max(g.long, e.TTL.D())
			o.Extends = append(o.Extends, e)
		}
		slices.SortStableFunc(o.Extends, func(a, b Extend) int { return int(a.After - b.After) })
		grows := len(o.Extends) > 1 && g.chance(0.5)
		if grows {
			// A holder whose work grows: each Extend asks for more than
			// the one before, and goes out before the one before could
			// run out, or (half of them) before what the lock surely had
			// runs out, should the one before fail (a short one still in
			// flight may then land after a longer one).
			ttls := make([]Duration, len(o.Extends))
			for i, e := range o.Extends {
				ttls[i] = e.TTL
			}
			slices.Sort(ttls)
			sure := g.chance(0.5)
			until := o.TTL.D() // from the grant: what the lock surely has
			for i := range o.Extends {
				e := &o.Extends[i]
				e.TTL = ttls[i]
				if i > 0 {
					prev := o.Extends[i-1]
					e.After = prev.After
					if !e.Along {
						w := prev.TTL.D()
						if sure && until-prev.After.D() > 0 {
							w = min(w, until-prev.After.D())
						}
						e.After += Duration(g.between(w/4, w))
					}
				}
				until = min(until, e.After.D()+e.TTL.D())
			}
		}
		if n := len(o.Extends); n > 0 && (grows || g.chance(0.5)) {
			// The holder holds on into the time its last Extend asked
			// for (what it extended for), while Extends that went astray
			// may still land.
			last := o.Extends[n-1]
			o.Hold = max(o.Hold, last.After+Duration(g.between(0, last.TTL.D())))
		}
	}
	switch k {
	case Plain, Fenced, Read, Write, Multi:
		extends()
	case Reentrant:
		*ownerSeq++
		o.Owner = c*1000 + *ownerSeq
		for n := g.r.IntN(3); n > 0; n-- {
			nt := g.between(max(ttl/4, s.minTTL()), max(ttl/2, s.minTTL())).Truncate(ms)
			nd := Nested{After: Duration(g.between(0, o.Hold.D()+1)), TTL: Duration(nt), Hold: Duration(g.between(0, nt))}
			if g.chance(0.5) {
				nd.Extend = Duration(g.between(s.minTTL(), nt).Truncate(ms))
			}
			o.Nested = append(o.Nested, nd)
		}
		o.Stall = g.chance(0.15)
		extends()
	case Semaphore:
		o.Permits = 2
		extends()
	case Renew, Do:
		o.Hold = Duration(g.between(ttl/2, 3*ttl))
	case Resume:
		o.To = (c + 1 + g.r.IntN(max(s.Clients-1, 1))) % s.Clients
		o.Stale = g.chance(0.3)
		o.Late = !o.Stale && g.chance(0.4)
		o.Try = true
		o.Fenced = g.o.FencedResume && g.chance(0.5)
	case Fair:
		o.Crash = false
	}
	switch k {
	case Plain, Fenced, Reentrant, Write, Fair, Semaphore, Multi, Renew:
		o.Record = g.chance(0.4)
	}
	if k == Multi {
		n := 1 + g.r.IntN(min(3, s.Keys[Multi]))
		perm := g.r.Perm(s.Keys[Multi])[:n]
		slices.Sort(perm)
		o.Keys = perm
		if o.Key == -1 {
			o.Keys = nil
		}
	}
	return o
}

// faults draws the faults, keeping the schedule within the library's
// assumptions unless Unsafe: at most a minority of the masters may have
// lost data within the longest TTL (plus the guard's second of rounding);
// a failover only to a replica that acknowledged every grant
// (Durability.Replicas); clock steps small.
func (g *gen) faults() {
	s := g.s
	n := len(s.Masters)
	quorum := n/2 + 1
	if g.o.NoFaults {
		return
	}
	allowed := g.o.Faults
	if len(allowed) == 0 {
		allowed = FaultKinds
	}
	allow := map[FaultKind]bool{}
	for _, k := range allowed {
		allow[k] = true
	}
	hasReplicas := s.Masters[0].ReplicaLag >= 0
	// A failover is safe only to a replica that acknowledged every grant:
	// every client must wait for it (Undurable clients do not).
	if !hasReplicas || ((s.Lib.Replicas == 0 || s.Lib.Undurable > 0) && !s.Unsafe) {
		delete(allow, Failover)
		if !hasReplicas {
			delete(allow, Lag)
		}
	}
	if s.Lib.Guard == "off" && !s.Unsafe && !s.Lib.Delayed {
		delete(allow, Crash) // without the guard only masters that persist every write may lose power
		if g.allAlways() {
			allow[Crash] = true
		}
	}
	if s.Lib.Delayed && !s.Unsafe {
		delete(allow, Failover) // a failover is instantaneous: nothing to delay
	}
	var kinds []FaultKind
	for _, k := range FaultKinds {
		if allow[k] {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 {
		return
	}
	if s.Theme == "split" {
		// Each client reaches a quorum of its own for the whole run (see
		// config): the others are cut off.
		for c, in := range g.reach {
			var out []int
			for i := range n {
				if !slices.Contains(in, i) {
					out = append(out, i)
				}
			}
			if len(out) > 0 {
				s.Faults = append(s.Faults, Fault{Kind: Cut, Masters: out, Clients: []int{c}, For: Duration(s.Horizon.D() + time.Minute), Prob: 1})
			}
		}
	}
	var plan []Fault // faults aimed at the split's weak points, checked as the others are
	if s.Theme == "split" && allow[Lag] && len(g.shared) > 0 && g.chance(0.8) {
		// A shared master's replica lags from the start: its
		// confirmations of replica writes come late, or not within their
		// wait, and a failover (soon after a lock was taken) promotes
		// what it had.
		x := g.shared[g.r.IntN(len(g.shared))]
		lag := g.between(1*time.Second, 3*time.Second)
		if g.chance(0.5) {
			lag = g.between(2*time.Second, 4*time.Second) // past the durable timeout (2s)
		}
		lf := Fault{Kind: Lag, Masters: []int{x}, Lag: Duration(lag)}
		if allow[Failover] && g.chance(0.7) {
			// After a grant that waited out its replica confirmation (up
			// to the durable timeout, 2s), before the replica has it.
			at := g.opTime() + g.between(1500*ms, 4*time.Second)
			if c, d, ok := g.pair(x); ok && g.chance(0.8) {
				// A contest once the warm-ups are done (each of their
				// grants waits for its replica), the lag from just
				// before.
				t := g.between(2500*ms, 4*time.Second)
				lf.At = Duration(t - g.between(0, 200*ms))
				at = t + g.between(2*time.Second, max(lag, 2*time.Second)+300*ms)
				g.contest(c, d, t, at+g.between(50*ms, 300*ms), nil)
			}
			plan = append(plan, Fault{Kind: Failover, Masters: []int{x}, At: Duration(at)})
		}
		s.Faults = append(s.Faults, lf)
	}
	if s.Theme == "split" && allow[Crash] {
		// A late process first meets a master that failed since a lock
		// was taken on it.
		for _, c := range g.late {
			var shared []int
			for _, i := range g.reach[c] {
				for d := range s.Clients {
					if d != c && slices.Contains(g.reach[d], i) && g.starts[d] < g.starts[c] {
						shared = append(shared, i)
					}
				}
			}
			if len(shared) > 0 && g.chance(0.7) && g.starts[c] > 300*ms {
				// Down briefly, back a little before the late client
				// first asks it who it is: the uptime it reads is then a
				// whole second off, one way or the other.
				x := shared[g.r.IntN(len(shared))]
				at := max(150*ms, g.starts[c]-g.between(100*ms, 900*ms))
				plan = append(plan, Fault{Kind: Crash, Masters: []int{x}, At: Duration(at), For: Duration(g.between(50*ms, 400*ms))})
				if a, ok := g.holder(x, c); ok && g.chance(0.6) {
					// Just before, an earlier client took a lock the
					// late one then asks for.
					g.contest(a, c, max(100*ms, at-g.between(10*ms, 150*ms)), g.starts[c]+g.between(0, 100*ms), nil)
				}
			}
		}
	}
	if s.WarmupExtend > 0 && allow[Crash] && g.chance(0.7) {
		// A shared master fails just after a lock on it was extended
		// past every acquire's TTL: only what the guard learnt from the
		// Extends keeps it back long enough.
		x := g.shared[g.r.IntN(len(g.shared))]
		if c, d, ok := g.pair(x); ok {
			t := g.between(300*ms, max(400*ms, s.Horizon.D()/2))
			ext := []Extend{{After: Duration(g.between(10*ms, 100*ms)), TTL: Duration(g.emax)}}
			at := t + g.between(150*ms, 400*ms)
			plan = append(plan, Fault{Kind: Crash, Masters: []int{x}, At: Duration(at), For: Duration(g.between(10*ms, 300*ms))})
			g.contest(c, d, t, at+g.between(100*ms, 500*ms), ext)
		}
	}
	// lossy[i]: until when master i counts as having lost data.
	lossy := make([]time.Duration, n)
	guardFor := g.long + g.long/50 + 1500*ms
	if s.Lib.Guard == "strict" {
		guardFor = max(guardFor, s.Lib.Strict.D()+1500*ms)
	}
	count := g.r.IntN(2 + int(s.Horizon.D()/time.Second)*2)
	extendFaults := g.r.IntN(3) // aimed at Extends, below
	if s.Theme == "plain" && g.chance(0.2) {
		count = 0 // fault-free runs are where fair order and starvation are judged
		extendFaults = 0
	}
	if s.Theme == "split" && len(plan) > 0 && g.chance(0.5) {
		count = g.r.IntN(2) // the planned faults alone, or nearly
		extendFaults = 0
	}
	var losing []FaultKind // split: the faults that make a shared master forget
	for _, k := range kinds {
		if k == Crash || k == Failover || k == Restart {
			losing = append(losing, k)
		}
	}
	for j := range count + len(plan) {
		f := Fault{At: Duration(g.between(0, s.Horizon.D())), Kind: kinds[g.r.IntN(len(kinds))]}
		planned := j < len(plan)
		if planned {
			f = plan[j]
		} else if s.Theme == "split" && len(losing) > 0 && g.chance(0.6) {
			f.Kind = losing[g.r.IntN(len(losing))]
			// Soon after an operation began: a master that forgets a
			// lock just granted, while it is still valid.
			if ops := s.Ops[g.r.IntN(len(s.Ops))]; len(ops) > 0 {
				f.At = ops[g.r.IntN(len(ops))].At + Duration(g.between(0, 1200*ms))
			}
			f.At = max(f.At, Duration(200*ms)) // after the warm-up
		}
		at := f.At.D()
		someMasters := func(most int) []int {
			k := 1 + g.r.IntN(most)
			p := g.r.Perm(n)[:k]
			slices.Sort(p)
			return p
		}
		someClients := func() []int {
			k := 1 + g.r.IntN(s.Clients)
			p := g.r.Perm(s.Clients)[:k]
			slices.Sort(p)
			return p
		}
		dir := func() string { return []string{"req", "rep", "both"}[g.r.IntN(3)] }
		switch f.Kind {
		case Delay:
			f.Masters, f.Clients, f.Dir = someMasters(n), someClients(), dir()
			f.For = Duration(g.between(10*ms, 3*time.Second))
			// Short, past the node timeout, or around the stall timeout
			// (from 750ms to 2.25s with the default 1s): a call the
			// Node fails that may still land, or one that lands just
			// before its stall timeout.
			stall := s.stall()
			f.Delay = Duration([]time.Duration{g.between(ms, 40*ms), g.between(40*ms, 300*ms), g.between(stall*3/4, stall*3/4+1500*ms)}[g.r.IntN(3)])
		case Drop:
			f.Masters, f.Clients, f.Dir = someMasters(n), someClients(), dir()
			f.For = Duration(g.between(10*ms, 2*time.Second))
			f.Prob = []float64{0.1, 0.5, 1}[g.r.IntN(3)]
		case LoseReply:
			f.Masters, f.Clients = someMasters(n), someClients()
			f.For = Duration(g.between(10*ms, 2*time.Second))
			f.Prob = []float64{0.2, 0.5, 1}[g.r.IntN(3)]
			f.Reset = g.chance(0.5)
		case Cut:
			f.Masters, f.Clients = someMasters(n), someClients()
			f.For = Duration(g.between(20*ms, 3*time.Second))
			if g.chance(0.3) {
				f.Prob = 1
			}
		case Crash, Failover:
			i := g.r.IntN(n)
			if len(g.shared) > 0 && g.chance(0.8) {
				i = g.shared[g.r.IntN(len(g.shared))]
			}
			if planned {
				i = f.Masters[0]
			}
			lost := 0
			for j := range n {
				if j != i && lossy[j] > at {
					lost++
				}
			}
			if f.Kind == Crash && f.For == 0 {
				f.For = Duration(g.between(100*ms, 2*time.Second))
			}
			f.Masters = []int{i}
			if f.Kind == Crash && s.Theme == "split" && s.Masters[i].Persist != "always" && g.chance(0.2) {
				// Restarted with another persistence: appendfsync always
				// now, and empty, for it did not have it before.
				f.Persist = []string{"always", "everysec"}[g.r.IntN(2)]
			}
			if f.Kind == Crash && s.Masters[i].Persist == "always" {
				break // loses nothing
			}
			if !s.Unsafe && lost+1 > n-quorum {
				continue
			}
			if f.Kind == Crash && s.Lib.Delayed {
				// Kept down until every lock it may have held expired.
				f.For = max(f.For, Duration(g.long+g.long/50+time.Second))
			}
			lossy[i] = max(lossy[i], at+f.For.D()+guardFor)
		case Restart:
			f.Masters = []int{g.r.IntN(n)}
			if len(g.shared) > 0 && g.chance(0.8) {
				f.Masters = []int{g.shared[g.r.IntN(len(g.shared))]}
			}
			f.For = Duration(g.between(100*ms, 1500*ms))
		case Freeze:
			f.Masters = []int{g.r.IntN(n)}
			f.For = Duration(g.between(10*ms, 2*time.Second))
		case ClockStep:
			f.Masters = []int{g.r.IntN(n)}
			f.Step = Duration(g.between(-ms, ms))
			if s.Unsafe && g.chance(0.5) {
				f.Step = Duration(g.between(-2*time.Second, 2*time.Second))
			}
		case ClockRate:
			f.Masters = []int{g.r.IntN(n)}
			f.Rate = 1 + (g.r.Float64()-0.5)*0.01
		case Lag:
			f.Masters = []int{g.r.IntN(n)}
			f.Lag = Duration(g.between(0, 2*time.Second))
		case ClientPause:
			f.Clients = []int{g.r.IntN(s.Clients)}
			f.For = Duration([]time.Duration{g.between(ms, 50*ms), g.between(50*ms, 500*ms), g.between(500*ms, 3*time.Second)}[g.r.IntN(3)])
		}
		s.Faults = append(s.Faults, f)
	}
	for range extendFaults {
		if !allow[Delay] {
			break
		}
		// An Extend's calls held up on some of its client's links: a
		// burst of delay that strikes the calls of that moment and
		// spares the next ones, past the node timeout (the fan-out goes
		// on without them) or around the stall timeout (the Node fails
		// them, and they may still land after the holder's next
		// Extend).
		if c, at, ok := g.extendMoment(); ok {
			k := 1 + g.r.IntN(n)
			masters := g.r.Perm(n)[:k]
			slices.Sort(masters)
			d := g.between(s.nodeTimeout(), 300*ms)
			if g.chance(0.6) {
				d = g.between(s.stall()*3/4, s.stall()*3/4+1500*ms)
			}
			s.Faults = append(s.Faults, Fault{Kind: Delay, At: Duration(max(at-g.between(0, 20*ms), 0)), Clients: []int{c}, Masters: masters,
				Dir: []string{"req", "rep", "both"}[g.r.IntN(3)], For: Duration(g.between(100*ms, 100*ms+4*s.nodeTimeout())), Delay: Duration(d)})
		}
	}
	slices.SortStableFunc(s.Faults, func(a, b Fault) int { return int(a.At - b.At) })
}

// extendMoment draws an Extend of the schedule: its client, and when it
// is sent as drawn (the client may be late). Mostly one that another
// Extend of the same hold follows, whose outcome depends on what became
// of it.
func (g *gen) extendMoment() (c int, at time.Duration, ok bool) {
	var all, followed [][2]int64
	for c, ops := range g.s.Ops {
		for _, o := range ops {
			for i, e := range o.Extends {
				x := [2]int64{int64(c), int64(o.At + e.After)}
				all = append(all, x)
				if i+1 < len(o.Extends) && !o.Extends[i+1].Along {
					followed = append(followed, x)
				}
			}
		}
	}
	if len(followed) > 0 && g.chance(0.7) {
		all = followed
	}
	if len(all) == 0 {
		return 0, 0, false
	}
	x := all[g.r.IntN(len(all))]
	return int(x[0]), time.Duration(x[1]), true
}

// split draws the masters each client reaches: a quorum each. The quorums
// meet in the masters they share, whose failures the faults aim at. With
// five masters, half of the schedules give every client a common pair:
// whichever of the two fails, the other keeps every client's record, and
// Extends may then go past the warm-up's TTL (the guard learns them from
// the records).
func (g *gen) split(n int) {
	s := g.s
	quorum := n/2 + 1
	g.reach = make([][]int, s.Clients)
	var pair []int
	if n == 5 && g.chance(0.5) {
		pair = g.r.Perm(n)[:2]
		g.longExtends = true
	}
	shared := make([]int, n)
	for c := range s.Clients {
		in := slices.Clone(pair)
		for _, i := range g.r.Perm(n) {
			if len(in) == quorum {
				break
			}
			if !slices.Contains(in, i) {
				in = append(in, i)
			}
		}
		slices.Sort(in)
		g.reach[c] = in
		for _, i := range in {
			shared[i]++
		}
	}
	for i, k := range shared {
		if k >= 2 {
			g.shared = append(g.shared, i)
		}
	}
}

// pair draws two clients, c and d, that both reach master x, where the
// loss of x alone lets d reach a quorum beside c's locks.
func (g *gen) pair(x int) (c, d int, ok bool) {
	for _, d := range g.r.Perm(len(g.reach)) {
		if c, ok := g.holder(x, d); ok {
			return c, d, true
		}
	}
	return 0, 0, false
}

// holder draws a client other than d that reaches x, whose locks the loss
// of x alone lets d overtake.
func (g *gen) holder(x, d int) (int, bool) {
	if !slices.Contains(g.reach[d], x) {
		return 0, false
	}
	for _, c := range g.r.Perm(len(g.reach)) {
		if c != d && slices.Contains(g.reach[c], x) && g.free(d, c)+1 >= len(g.s.Masters)/2+1 {
			return c, true
		}
	}
	return 0, false
}

// free counts the masters d reaches and c does not.
func (g *gen) free(d, c int) int {
	n := 0
	for _, i := range g.reach[d] {
		if !slices.Contains(g.reach[c], i) {
			n++
		}
	}
	return n
}

// contest adds a contest for a key of its own to the schedule: client c
// takes it at take (waiting up to 3s: a grant may wait for its
// confirmation), extends it as ext says and holds it for its TTL; client d
// asks for it from ask until it could have expired. A fault planned between the
// two is what decides it.
func (g *gen) contest(c, d int, take, ask time.Duration, ext []Extend) {
	s := g.s
	k := Plain
	if s.Keys[Plain] == 0 {
		k = Fenced
	}
	key := s.Keys[k] // a key of the contest's own
	s.Keys[k]++
	ttl := g.tmax
	hold := ttl - 100*ms
	g.long = max(g.long, ttl) // a delayed restart waits out the contest's lock too
	for _, e := range ext {
		hold = max(hold, e.After.D()+e.TTL.D()-100*ms)
		g.long = max(g.long, e.TTL.D())
	}
	insert := func(c int, o Op) {
		s.Ops[c] = append(s.Ops[c], o)
		slices.SortStableFunc(s.Ops[c], func(a, b Op) int { return int(a.At - b.At) })
	}
	insert(c, Op{At: Duration(take), Kind: k, Key: key, TTL: Duration(ttl), Wait: Duration(3 * time.Second), Hold: Duration(hold), Extends: ext})
	insert(d, Op{At: Duration(ask), Kind: k, Key: key, TTL: Duration(ttl), Wait: Duration(take - ask + hold + time.Second), Hold: Duration(100 * ms)})
}

// opTime is when a random operation of a random client starts (0 when
// there is none).
func (g *gen) opTime() time.Duration {
	ops := g.s.Ops[g.r.IntN(len(g.s.Ops))]
	if len(ops) == 0 {
		return 0
	}
	return ops[g.r.IntN(len(ops))].At.D()
}
