package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// The probes are the deterministic part of a run: after the random
// workload, on a healed cluster, each probe drives one path to two holders
// (or to a lock left behind) through its mechanism once, with the fault
// that opens it aimed at the call that must survive it. Everything a probe
// does is recorded in the same history as the random workload and judged by
// the same invariants and both checkers; a probe decides nothing by a
// sleep: it waits for what the masters say (settle, sample) and, where a
// late command must land first, for the masters' own state to show it.

// Probe names one deterministic probe.
type Probe string

// The probes.
const (
	// DropPrivate: the reply of every master to a TryLock of a free private
	// key is dropped and its connection reset. The masters ran the SET; the
	// attempt fails and must leave no key behind. A transport that sends
	// the SET again gets it refused by the attempt's own key, counts a
	// refusal, and leaves the key for its whole TTL.
	DropPrivate Probe = "drop-private"
	// DropInner: a reentrant owner holds an outer and an inner hold; the
	// inner hold is extended by a short TTL, then released through dropped
	// replies. The outer hold must stay on the masters (sampled) and keep
	// another owner out: a command sent twice decrements twice; an extend
	// that sets the TTL unconditionally shortens the outer hold.
	DropInner Probe = "drop-inner-unlock"
	// SharedMulti: while client B holds a key, client A puts each of its
	// shared connections into MULTI and sends CLIENT REPLY SKIP on it (as
	// an application calling node.Do would; the subcommand of its own Go
	// type), then two ECHOs on it; then A tries the key. The commands must
	// be refused, every ECHO must get its own reply, and a QUEUED reply
	// must never count as a grant.
	SharedMulti Probe = "shared-multi"
	// EndedUnlock: Unlock with a context that has already ended, on a lock
	// with a long TTL: the releases must still be sent, so no quorum holds
	// the key once they had time to land.
	EndedUnlock Probe = "ended-unlock"
	// ShortExtend: a lock with a long TTL is extended by a much shorter one
	// while a majority of its links are slower than the node timeout: the
	// Extend fails, but the late PEXPIREs land; once a quorum of the masters
	// enforce the shorter TTL the lock's Until must not be later (sampled).
	ShortExtend Probe = "short-extend"
	// LateExtend: a lock with a short TTL is extended right away over links
	// slower than its TTL: the commands reach the masters after the key
	// expired. The key must not reappear with the lock's token.
	LateExtend Probe = "late-extend"
	// RWExclusion: a writer holds and a reader tries; then a reader holds
	// and a writer tries: both tries must be refused.
	RWExclusion Probe = "rw-exclusion"
	// SemaphoreFull: two clients fill a semaphore of two permits; one of
	// them tries again and again, some tries with its links to a minority
	// of the masters cut: every try must be refused.
	SemaphoreFull Probe = "semaphore-full"
	// FairHeld: a fair lock is held past every waiter's registration;
	// another client then tries it: the lock key alone must refuse it.
	FairHeld Probe = "fair-held"
	// LateNoScript: the masters forget their scripts (SCRIPT FLUSH), and
	// one master is reached over a link slower than the node timeout,
	// which answers NOSCRIPT after the callers gave up: first for a
	// fenced TryLock and its Unlock (the acquire may land late, a
	// minority's grant; the release must land too), then for the Unlock
	// of a lock every master holds (the release's EVAL, or a retry's, must
	// still run). Either way the key may not stay on that master (issue
	// 22 item 6).
	LateNoScript Probe = "late-noscript"
	// LateAcquire: a TryLock whose request to one master comes late, past
	// the connection's stall timeout, is released over a new connection:
	// the release reaches that master first. The late acquire must not
	// set the key there (probe_late.go).
	LateAcquire Probe = "late-acquire"
	// FenceAhead: one master's fencing counter runs ahead of the others'
	// (as its clock would); fenced locks granted by two quorums, one with
	// that master and one without, must get increasing tokens: the
	// quorum's token is written back (probe_fence.go).
	FenceAhead Probe = "fence-ahead"
	// ReleaseRetried: an Unlock's release to one master fails unrun (its
	// link cut, then reset); once the link healed, the release must be
	// sent again and run there, long before the TTL (probe_release.go).
	ReleaseRetried Probe = "release-retried"
	// ExtendsInOrder: a long Extend whose replies are held back, and a
	// short one called once the masters applied the long one, on one
	// Lock; the held replies are let through once the short Extend
	// returned, or once it sent nothing for a while (it waits for the long
	// one): Until must not end past the short TTL the masters enforce
	// (probe_extend.go).
	ExtendsInOrder Probe = "extends-in-order"
	// RetriedOwner: a reentrant owner's hold expires while its job
	// stalls; the job is retried under the same owner id on another
	// client, which acquires afresh; then the stalled job unlocks its
	// expired hold. The new hold must stay (sampled), and keep another
	// owner out (probe_identity.go).
	RetriedOwner Probe = "retried-owner"
	// GiverLate: a lock is handed over by its token, and the taker
	// releases it; the taker takes the key again; then the giver unlocks
	// and extends its own stale Lock. The new lock must stay, and the old
	// token's key must not come back (probe_identity.go).
	GiverLate Probe = "giver-late"
	// FairOrder: three fair waiters queue up one after another behind a
	// holder; the first crashes; the holder unlocks. The others must be
	// served in order, and the crashed one's registration must delay them
	// no longer than its lifetime (probe_fair.go).
	FairOrder Probe = "fair-order"
	// LateReadExtend: a reader extends its hold over links slower than
	// its TTL, so that the Extend lands after the reader expired, while a
	// writer takes the lock. The Extend must not re-admit the reader
	// beside the writer (probe_rw.go).
	LateReadExtend Probe = "late-read-extend"
	// RenewHeld: on healthy masters, an AutoRenew lock and a Locker.Do
	// run for two TTLs: neither may be lost; then again, with their
	// links cut once they hold: their contexts must end by the lock's
	// Until (probe_renew.go).
	RenewHeld Probe = "renew-held"
	// ExtendContext: a lock is extended by a TTL much shorter than its
	// own; its context must end by the lowered Until (probe_renew.go).
	ExtendContext Probe = "extend-context"
	// The GiveUp probes: with the link of client A to one master slower
	// than the node timeout (so that a waiting Lock's wake-on-release
	// subscription there takes that long), A holds what a call of the
	// kind waits for, and the call gives up after half a node timeout (in
	// the first round; a node timeout and a half in the next, and so on)
	// and then as a TryLock: nothing of it may remain on any other master
	// (probe_giveup.go).
	GiveUpRW        Probe = "give-up-rw"        // a writer behind a reader, a reader behind a writer
	GiveUpFair      Probe = "give-up-fair"      // a fair waiter behind a holder
	GiveUpSemaphore Probe = "give-up-semaphore" // an acquire of a full semaphore
	GiveUpMulti     Probe = "give-up-multi"     // a multi-key set with one key held
	GiveUpReentrant Probe = "give-up-reentrant" // another owner
)

// Probes returns the probes that exercise the kinds ks.
func Probes(ks []Kind) []Probe {
	var ps []Probe
	for _, k := range ks {
		switch k {
		case Plain:
			ps = append(ps, DropPrivate, SharedMulti, EndedUnlock, LateNoScript, LateAcquire, ReleaseRetried)
		case Reentrant:
			ps = append(ps, DropInner, RetriedOwner, GiveUpReentrant)
		case Extend:
			ps = append(ps, ShortExtend, LateExtend, ExtendContext, FenceAhead, ExtendsInOrder)
		case RW:
			ps = append(ps, RWExclusion, LateReadExtend, GiveUpRW)
		case Semaphore:
			ps = append(ps, SemaphoreFull, GiveUpSemaphore)
		case Fair:
			ps = append(ps, FairHeld, FairOrder, GiveUpFair)
		case Multi:
			ps = append(ps, GiveUpMulti)
		case Resume:
			ps = append(ps, GiverLate)
		case Renew:
			ps = append(ps, RenewHeld)
		}
	}
	return ps
}

// probeTTL is the TTL of the probes' long holds: far longer than anything
// a probe waits for, so that a lock left behind is still there when the
// probe looks.
const probeTTL = 5 * time.Second

// RunProbes runs each probe of ps once per round, rounds times, each round
// with other clients (e needs at least two), on a cluster whose faults
// have all been healed. It returns a harness error (a fault the injector
// could not apply, a call refused as invalid); what the library does is
// recorded in the history.
func RunProbes(ctx context.Context, e *Env, ps []Probe, rounds int) error {
	if len(e.clients) < 2 {
		return fmt.Errorf("workload: probes need 2 clients, have %d", len(e.clients))
	}
	defer e.pending.Wait()
	for r := range rounds {
		for i, p := range ps {
			a := e.clients[(r+i)%len(e.clients)].probing
			b := e.clients[(r+i+1)%len(e.clients)].probing
			pr := &prober{e: e, a: a, b: b, name: fmt.Sprintf("probe-%s-%d", p, r), round: r}
			if err := pr.run(ctx, p); err != nil {
				return fmt.Errorf("workload: probe %s: %w", p, err)
			}
		}
	}
	return nil
}

// prober runs one probe with clients a (the one the fault aims at) and b.
type prober struct {
	e     *Env
	a, b  *Client
	name  string // the probe's lock name, fresh for each probe
	round int    // the round, from 0
}

func (p *prober) run(ctx context.Context, pr Probe) error {
	switch pr {
	case DropPrivate:
		return p.dropPrivate(ctx)
	case DropInner:
		return p.dropInner(ctx)
	case SharedMulti:
		return p.sharedMulti(ctx)
	case EndedUnlock:
		return p.endedUnlock(ctx)
	case ShortExtend:
		return p.shortExtend(ctx)
	case LateExtend:
		return p.lateExtend(ctx)
	case RWExclusion:
		return p.rwExclusion(ctx)
	case SemaphoreFull:
		return p.semaphoreFull(ctx)
	case FairHeld:
		return p.fairHeld(ctx)
	case LateNoScript:
		return p.lateNoScript(ctx)
	case LateAcquire:
		return p.lateAcquire(ctx)
	case FenceAhead:
		return p.fenceAhead(ctx)
	case ExtendsInOrder:
		return p.extendsInOrder(ctx)
	case ReleaseRetried:
		return p.releaseRetried(ctx)
	case RetriedOwner:
		return p.retriedOwner(ctx)
	case GiverLate:
		return p.giverLate(ctx)
	case FairOrder:
		return p.fairOrder(ctx)
	case LateReadExtend:
		return p.lateReadExtend(ctx)
	case RenewHeld:
		return p.renewHeld(ctx)
	case ExtendContext:
		return p.extendContext(ctx)
	case GiveUpRW:
		return p.giveUp(ctx, blockedWriter, blockedReader)
	case GiveUpFair:
		return p.giveUp(ctx, blockedFair)
	case GiveUpSemaphore:
		return p.giveUp(ctx, blockedSemaphore)
	case GiveUpMulti:
		return p.giveUp(ctx, blockedMulti)
	case GiveUpReentrant:
		return p.giveUp(ctx, blockedReentrant)
	}
	return fmt.Errorf("unknown probe %q", pr)
}

// links applies a fault of kind k (with arg) to the links of client c to
// nodes (all when none is given), through the injector so that it is
// logged.
func (p *prober) links(ctx context.Context, c *Client, k fault.Kind, arg time.Duration, nodes ...int) error {
	if len(nodes) == 0 {
		for j := range p.e.nodes[c.ID] {
			nodes = append(nodes, j)
		}
	}
	for _, j := range nodes {
		if err := p.e.Faults.Apply(ctx, fault.Fault{Kind: k, Node: j, Clients: []int{c.ID}, Arg: arg}); err != nil {
			return err
		}
	}
	return nil
}

// heal ends the faults of client c's links (DISCARD where a MULTI was
// accepted).
func (p *prober) heal(ctx context.Context, c *Client) error { return p.links(ctx, c, fault.Heal, 0) }

// warm makes sure client c has a live connection to every master, so that
// a DropReply armed next drops the reply of the probe's own command, not
// that of a connection's set-up.
func (p *prober) warm(ctx context.Context, c *Client) {
	for _, n := range p.e.nodes[c.ID] {
		cctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
		n.Do(cctx, "PING")
		cancel()
	}
}

// acquire records an acquire call of client c on the string key of name.
func (p *prober) acquire(c *Client, try func() (*redlock.Lock, error)) (*Held, error) {
	return c.record(checker.Event{Key: p.name}, target{mode: modeString, key: p.e.Key(p.name)}, try)
}

// unlock releases h, bounded by ReleaseTimeout, and waits for the release
// to leave no quorum holding it.
func (p *prober) unlock(ctx context.Context, h *Held, what string) {
	rctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	defer cancel()
	if err := h.releaseWith(rctx); err != nil {
		what = fmt.Sprintf("%s (Unlock: %v)", what, err)
	}
	h.client.cleared(ctx, h.name, h.target, what, h.since)
}

// tryUnder has client A try key (a plain TryLock for probeTTL) with a
// fault of kind k (with arg) on its live links to nodes (all when none
// is given), healed once the call returned. It returns the call's hold
// (nil when it failed), when it began and its error, and the harness's
// error.
func (p *prober) tryUnder(ctx context.Context, key string, k fault.Kind, arg time.Duration, nodes ...int) (*Held, time.Time, error, error) {
	p.warm(ctx, p.a)
	if err := p.links(ctx, p.a, k, arg, nodes...); err != nil {
		return nil, time.Time{}, nil, err
	}
	start := time.Now()
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, probeTTL) })
	return h, start, err, p.heal(ctx, p.a)
}

func (p *prober) dropPrivate(ctx context.Context) error {
	key := p.e.Key(p.name)
	h, start, err, herr := p.tryUnder(ctx, key, fault.DropReply, 0)
	if herr != nil {
		return herr
	}
	if err != nil {
		t, what := target{mode: modeAny, key: key}, "TryLock whose replies were dropped"
		p.a.settle(ctx, p.name, t, what)
		p.a.remains(ctx, p.name, t, what, start, time.Now().Add(SettleWithin))
		return harness(err)
	}
	p.unlock(ctx, h, "unlock after a TryLock whose replies were dropped")
	return nil
}

func (p *prober) dropInner(ctx context.Context) error {
	key := p.e.Key(p.name)
	owner, other := p.name+"-a", p.name+"-b"
	r := p.a.Locker.Reentrant(key, owner)
	lock := func(c *Client, r *redlock.Reentrant, owner string, ttl time.Duration) (*Held, error) {
		return c.record(checker.Event{Key: p.name, Owner: owner}, target{mode: modeHash, key: key, member: owner},
			func() (*redlock.Lock, error) { return r.TryLock(ctx, ttl) })
	}
	outer, err := lock(p.a, r, owner, probeTTL)
	if err != nil {
		return harness(err)
	}
	defer p.unlock(ctx, outer, "unlock of the outer hold")
	inner, err := lock(p.a, r, owner, time.Second)
	if err != nil {
		return harness(err)
	}
	// An inner hold extended by a short TTL must not shorten the outer one.
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	inner.Lock.Extend(xctx, time.Second/2)
	cancel()
	inner.noteUntil()
	p.e.sample(ctx, outer)
	// The inner release's replies are lost: it must run once per master.
	// A dropped NOSCRIPT would hide a release that never ran, so the
	// release script must be loaded on every master first: one whole
	// reentrant hold of a key of its own does that.
	if err := p.loadReentrantScripts(ctx, key+"-scripts", owner); err != nil {
		return err
	}
	p.warm(ctx, p.a)
	if err := p.links(ctx, p.a, fault.DropReply, 0); err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	inner.releaseWith(rctx)
	cancel()
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	p.e.sample(ctx, outer)
	// The outer hold keeps another owner out.
	h, err := lock(p.b, p.b.Locker.Reentrant(key, other), other, time.Second)
	if err != nil {
		return harness(err)
	}
	p.unlock(ctx, h, "unlock of another owner's hold")
	return nil
}

// loadReentrantScripts makes client A take and release a reentrant hold
// of key (not recorded: it only gets the scripts cached on the masters).
func (p *prober) loadReentrantScripts(ctx context.Context, key, owner string) error {
	lctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	defer cancel()
	lk, err := p.a.Locker.Reentrant(key, owner).TryLock(lctx, probeTTL)
	if err != nil {
		return harness(err)
	}
	if err := lk.Unlock(lctx); err != nil {
		return harness(err)
	}
	return nil
}

func (p *prober) sharedMulti(ctx context.Context) error {
	key := p.e.Key(p.name)
	held, err := p.acquire(p.b, func() (*redlock.Lock, error) { return p.b.plain.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	defer p.unlock(ctx, held, "unlock of the holder")
	p.warm(ctx, p.a)
	// On each link in turn: the connection-state fault twice (the
	// injector alternates MULTI and CLIENT REPLY SKIP, so each link meets
	// both), then the ECHOs at once, before a stall timeout could replace
	// a connection whose replies went out of step.
	for j := range p.e.nodes[p.a.ID] {
		for range 2 {
			if err := p.links(ctx, p.a, fault.Multi, 0, j); err != nil {
				return err
			}
		}
		if !p.echoLink(ctx, p.a, key, j) {
			break
		}
	}
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, time.Second) })
	if herr := p.heal(ctx, p.a); herr != nil {
		return herr
	}
	if err != nil {
		return harness(err)
	}
	p.unlock(ctx, h, "unlock of a lock granted beside a holder")
	return nil
}

func (p *prober) endedUnlock(ctx context.Context) error {
	key := p.e.Key(p.name)
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	h.releaseWith(ended)
	p.a.cleared(ctx, h.name, h.target, "Unlock with an ended context", h.since)
	return nil
}

// probeSlow is the latency of the slow links of the probes that need an
// Extend to fail but land: longer than the node timeout.
const probeSlow = 3 * NodeTimeout / 2

func (p *prober) shortExtend(ctx context.Context) error {
	key := p.e.Key(p.name)
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	defer p.unlock(ctx, h, "unlock after a failed shorter Extend")
	short := probeTTL / 8
	majority := make([]int, p.e.quorum)
	for i := range majority {
		majority[i] = i
	}
	if err := p.links(ctx, p.a, fault.Slow, probeSlow, majority...); err != nil {
		return err
	}
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	h.Lock.Extend(xctx, short)
	cancel()
	h.noteUntil()
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	// Wait for the late PEXPIREs: a quorum enforcing at most the short TTL.
	for deadline := time.Now().Add(SettleWithin); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		n := 0
		for _, r := range p.e.direct.read(ctx, h.target) {
			if r.known && r.held && r.left <= short {
				n++
			}
		}
		if n >= p.e.quorum {
			break
		}
	}
	p.e.sample(ctx, h)
	return nil
}

func (p *prober) lateExtend(ctx context.Context) error {
	key := p.e.Key(p.name)
	const ttl = 2 * NodeTimeout
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.plain.TryLock(ctx, key, ttl) })
	if err != nil {
		return harness(err)
	}
	// Every master got the SET before the reply came: by then plus the TTL
	// each of them has let the key expire.
	expired := time.Now().Add(ttl + 2*time.Millisecond)
	const latency = 2 * ttl
	if err := p.links(ctx, p.a, fault.Slow, latency); err != nil {
		return err
	}
	sent := time.Now()
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	h.Lock.Extend(xctx, probeTTL)
	cancel()
	h.noteUntil()
	// Watch the masters until well after the late commands arrived: from
	// the expiry on, no quorum may hold the key with the lock's token.
	for end := sent.Add(latency + SettleWithin/2); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		at := time.Now()
		if at.Before(expired) {
			continue
		}
		if n := holding(p.e.direct.read(ctx, h.target)); n >= p.e.quorum {
			p.e.History.Left(p.a.ID, h.name, time.Now(), fmt.Sprintf(
				"Extend sent %v before the key's expiry: %d masters hold %s %s again %v after it expired",
				expired.Sub(sent).Round(time.Millisecond), n, h.target.key, h.target.member, at.Sub(expired).Round(time.Millisecond)))
			break
		}
	}
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	p.unlock(ctx, h, "unlock of an expired lock")
	return nil
}

func (p *prober) lateNoScript(ctx context.Context) error {
	key := p.e.Key(p.name)
	// Client A sends both scripts once, so that its connections send them
	// by digest (EVALSHA) from then on; then the masters forget them.
	lctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	lk, err := p.a.Locker.TryLock(lctx, key+"-scripts", probeTTL)
	if err == nil {
		err = lk.Unlock(lctx)
	}
	cancel()
	if err != nil {
		return harness(err)
	}
	flush := func() error { return p.e.direct.do(ctx, "SCRIPT", "FLUSH") }
	const slow = 0 // one master: a minority
	slowLink := func() error { return p.links(ctx, p.a, fault.Slow, probeSlow, slow) }
	// lock returns nil and the harness's error (nil for a refusal, which
	// the history records) when the TryLock fails.
	lock := func() (*Held, error) {
		h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return p.a.Locker.TryLock(ctx, key, probeTTL) })
		if err != nil {
			if herr := p.heal(ctx, p.a); herr != nil {
				return nil, herr
			}
			return nil, harness(err)
		}
		return h, nil
	}

	// A late acquire: both its EVALSHA and the release's come back
	// NOSCRIPT after their callers gave up. The acquire's EVAL lands a
	// hop later, and so does the release's EVAL behind it. The release
	// may reach the master before the acquire (it leaves a tombstone, and
	// the acquire changes nothing) or after it (the acquire sets the key,
	// and the release deletes it).
	if err := flush(); err != nil {
		return err
	}
	if err := slowLink(); err != nil {
		return err
	}
	start := time.Now()
	h, err := lock()
	if h == nil {
		return err
	}
	p.unlock(ctx, h, "unlock of a fenced lock whose acquire reached a master late")
	p.goneWhileSlow(ctx, h, slow, start, start.Add(4*probeSlow+SettleWithin/2),
		"a release answered NOSCRIPT late never ran, or the acquire ran after it and stayed")
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}

	// A late release of a lock every master holds: the masters forget
	// the release script, and the slow master answers its EVALSHA with
	// NOSCRIPT after the release's node timeout. Its EVAL (or a retry's)
	// must still run.
	if h, err = lock(); h == nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := slowLink(); err != nil {
		return err
	}
	start = time.Now()
	p.unlock(ctx, h, "unlock answered NOSCRIPT late by a master")
	p.goneWhileSlow(ctx, h, slow, start, start, "a release answered NOSCRIPT after its node timeout never ran")
	return p.heal(ctx, p.a)
}

// goneWhileSlow records a lock left behind when master slow holds h's key
// (with h's token) after end, or longer than SettleWithin after it was
// first seen there, while the probe's link to it stays slow.
func (p *prober) goneWhileSlow(ctx context.Context, h *Held, slow int, start, end time.Time, why string) {
	var seen time.Time
	var left time.Duration
	for ; ; time.Sleep(5 * time.Millisecond) {
		rs := p.e.direct.read(ctx, h.target)
		held := rs[slow].known && rs[slow].held
		switch {
		case held && seen.IsZero():
			seen, left = time.Now(), rs[slow].left
			end = seen.Add(SettleWithin)
		case !held && !seen.IsZero():
			return // set, and released after
		}
		if time.Now().After(end) {
			break
		}
	}
	if !seen.IsZero() {
		p.e.History.Left(p.a.ID, h.name, time.Now(), fmt.Sprintf(
			"master %d holds %s %s %v after the call, for %v more: %s",
			slow, h.target.key, h.target.member, seen.Sub(start).Round(time.Millisecond), left.Round(time.Millisecond), why))
	}
}

func (p *prober) rwExclusion(ctx context.Context) error {
	key := p.e.Key(p.name)
	m := func(c *Client) *redlock.RWMutex { return c.Locker.RWMutex(key) }
	hold := func(c *Client, reader bool, ttl time.Duration) (*Held, error) {
		t := target{mode: modeString, key: "{" + key + "}:w"}
		lock := m(c).TryLock
		if reader {
			t = target{mode: modeZset, key: "{" + key + "}:r"}
			lock = m(c).TryRLock
		}
		return c.record(checker.Event{Key: p.name, Shared: reader}, t,
			func() (*redlock.Lock, error) { return lock(ctx, ttl) })
	}
	for _, writerFirst := range []bool{true, false} {
		first, err := hold(p.a, !writerFirst, probeTTL)
		if err != nil {
			return harness(err)
		}
		if h, err := hold(p.b, writerFirst, time.Second); err == nil {
			p.unlock(ctx, h, "unlock of a hold granted beside an incompatible one")
		} else if herr := harness(err); herr != nil {
			return herr
		}
		p.unlock(ctx, first, "unlock of the first hold")
	}
	return nil
}

// echoLink has client c send, on its link to master j, two ECHOs with
// tokens of their own, one after the other: each must get its own reply,
// in time (the masters are healthy here). After a command that changes the
// state of a shared connection got through (CLIENT REPLY SKIP leaves the
// next replies missing and out of step; MULTI makes them QUEUED), they do
// not, and the mismatch is recorded. It reports whether they did.
func (p *prober) echoLink(ctx context.Context, c *Client, key string, j int) bool {
	n := p.e.nodes[c.ID][j]
	for k := range 2 {
		token := fmt.Sprintf("step:%d:%d:%d", c.ID, j, k)
		cctx, cancel := context.WithTimeout(ctx, echoStepWait)
		reply, err := n.Do(cctx, "ECHO", token)
		cancel()
		got := fmt.Sprint(reply)
		if b, ok := reply.([]byte); ok {
			got = string(b)
		}
		if ctx.Err() != nil {
			return false
		}
		if err != nil || got != token {
			p.e.History.Misreply(c.ID, key, time.Now(), fmt.Sprintf(
				"client %d's ECHO %s to %s got %q, %v: the connection's replies are out of step", c.ID, token, n.Addr(), got, err))
			return false
		}
	}
	return true
}

// echoStepWait bounds an ECHO of echoLink on a healthy master.
const echoStepWait = 2 * time.Second
