package workload

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// run runs c's operations one after another, each no earlier than its
// time.
func (c *client) run(ctx context.Context) {
	r := c.r
	warm := r.S.Warmup > 0
	for _, op := range r.S.Ops[c.i] {
		if ctx.Err() != nil || r.W.Crashed(c.i) {
			return
		}
		if d := time.Until(r.start.Add(op.At.D())); d > 0 {
			sleep(ctx, d)
		}
		if warm {
			c.warmup(ctx)
			warm = false
		}
		r.mu.Lock()
		r.ops++
		r.mu.Unlock()
		c.op(ctx, op)
	}
}

// warmup has every Locker of the client record the schedule's longest TTL
// with the restart guard: a TryLock of a key of the client's own (the guard
// records the TTL before the attempt, granted or not), extended to
// WarmupExtend where the schedule has one (or, if the TryLock failed,
// another TryLock for that long).
func (c *client) warmup(ctx context.Context) {
	key := fmt.Sprintf("warmup-%d", c.i)
	ext := c.r.S.WarmupExtend.D()
	for _, l := range []*redlock.Locker{c.base, c.fenced, c.renew, c.plain} {
		lk, err := l.TryLock(ctx, key, c.r.S.Warmup.D())
		switch {
		case err == nil && ext > 0:
			_ = lk.Extend(ctx, ext)
		case ext > 0:
			lk, err = l.TryLock(ctx, key, ext)
		}
		if err == nil {
			_ = lk.Unlock(context.WithoutCancel(ctx))
		}
	}
}

// sleep waits for d or ctx.
func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// op runs one operation.
func (c *client) op(ctx context.Context, op schedule.Op) {
	switch op.Kind {
	case schedule.Plain, schedule.Fenced, schedule.Read, schedule.Write, schedule.Fair, schedule.Semaphore, schedule.Renew:
		c.simple(ctx, op)
	case schedule.Multi:
		c.multi(ctx, op)
	case schedule.Reentrant:
		c.reentrant(ctx, op)
	case schedule.Do:
		c.do(ctx, op)
	case schedule.Resume:
		c.resume(ctx, op)
	}
}

// locker is the Locker an operation of kind k uses.
func (c *client) locker(k schedule.Kind) *redlock.Locker {
	switch k {
	case schedule.Fenced:
		return c.fenced
	case schedule.Renew:
		return c.renew
	}
	return c.base
}

// callCtx returns the context of an acquire of op (ending after op.Wait
// for a Lock), with a ref for the observer, and the give-up time for the
// record (0: none).
func (c *client) callCtx(ctx context.Context, op schedule.Op) (context.Context, context.CancelFunc, *ref, time.Duration) {
	cctx, rf := withRef(ctx)
	if op.Try {
		cctx, cancel := context.WithCancel(cctx)
		return cctx, cancel, rf, 0
	}
	wait := op.Wait.D()
	if wait <= 0 {
		wait = 10 * time.Second
	}
	dctx, cancel := context.WithTimeout(cctx, wait)
	return dctx, cancel, rf, c.r.H.Offset(time.Now().Add(wait))
}

// simple is an operation on one key: acquire, hold (extending, sampling,
// watching the lock's context), release.
func (c *client) simple(ctx context.Context, op schedule.Op) {
	r := c.r
	name := keyName(op.Kind, op.Key, c.i)
	rkey := r.S.Lib.Prefix + name
	l := c.locker(op.Kind)
	if op.Exit {
		// A process of its own, which closes its Locker right after the
		// call and exits: what it left must be gone all the same.
		var exit func()
		if l, exit = c.exiting(op); l == nil {
			return
		}
		defer c.exit(l, exit)
	}
	e := checker.Event{Waits: !op.Try}
	var acquire func(ctx context.Context) (*redlock.Lock, error)
	ttl := op.TTL.D()
	rec := c.record(op)
	switch op.Kind {
	case schedule.Plain, schedule.Fenced, schedule.Renew:
		acquire = func(ctx context.Context) (*redlock.Lock, error) {
			if op.Try {
				return l.TryLock(ctx, name, ttl, rec...)
			}
			return l.Lock(ctx, name, ttl, rec...)
		}
		if op.Kind == schedule.Renew {
			e.Renewed, e.TTL = true, ttl
		}
	case schedule.Read:
		e.Shared = true
		m := l.RWMutex(name)
		acquire = func(ctx context.Context) (*redlock.Lock, error) {
			if op.Try {
				return m.TryRLock(ctx, ttl)
			}
			return m.RLock(ctx, ttl)
		}
	case schedule.Write:
		m := l.RWMutex(name)
		acquire = func(ctx context.Context) (*redlock.Lock, error) {
			if op.Try {
				return m.TryLock(ctx, ttl, rec...)
			}
			return m.Lock(ctx, ttl, rec...)
		}
	case schedule.Fair:
		r.mu.Lock()
		r.fair[name] = true
		r.mu.Unlock()
		f := l.Fair(name)
		acquire = func(ctx context.Context) (*redlock.Lock, error) {
			if op.Try {
				return f.TryLock(ctx, ttl, rec...)
			}
			return f.Lock(ctx, ttl, rec...)
		}
	case schedule.Semaphore:
		e.Shared, e.Permits = true, op.Permits
		s := l.Semaphore(name, op.Permits)
		acquire = func(ctx context.Context) (*redlock.Lock, error) {
			if op.Try {
				return s.TryAcquire(ctx, ttl, rec...)
			}
			return s.Acquire(ctx, ttl, rec...)
		}
	}
	before := c.snapshot(op, []string{rkey})
	cctx, cancel, rf, giveUp := c.callCtx(ctx, op)
	defer cancel()
	e.GiveUp = giveUp
	call := time.Now()
	if op.Kind == schedule.Fair {
		c.mu.Lock()
		c.inFair[rkey] = call
		c.mu.Unlock()
	}
	lk, err := acquire(cctx)
	if op.Kind == schedule.Fair {
		c.mu.Lock()
		delete(c.inFair, rkey)
		c.mu.Unlock()
	}
	if err != nil {
		c.attempt(e, []string{name}, call, err)
		c.settleAfterExit(op, l, before, call, rf)
		return
	}
	t := target{token: lk.Token()}
	switch op.Kind {
	case schedule.Read:
		rw := layout.RWKeys(rkey)
		t.zset, t.member = rw.Readers, lk.Token()
	case schedule.Write:
		t.strings = []string{layout.RWKeys(rkey).Writer}
	case schedule.Semaphore:
		t.strings = []string{layout.Permit(rkey, lk.Permit())}
	default:
		t.strings = []string{rkey}
	}
	h := c.grant(e, []string{name}, call, lk, t, rf)
	var wg sync.WaitGroup
	if op.Contend && op.Kind == schedule.Read {
		wg.Go(func() { c.contendWrite(ctx, op, l, name, rkey) })
	}
	c.hold(cctx, op, h, rf)
	c.unlock(ctx, op, h)
	wg.Wait()
	c.settleAfterExit(op, l, before, call, rf)
}

// contendWrite is the client's own writer beside its read hold
// (Op.Contend): it waits for the write side of name (up to the read
// hold's end and 2s more), holds it for a quarter of op's hold and
// unlocks it. It finds the reader on the masters: its waiting mark, and
// whether its grant and release leave one behind, are the settle check's
// to judge.
func (c *client) contendWrite(ctx context.Context, op schedule.Op, l *redlock.Locker, name, rkey string) {
	wctx, rf := withRef(ctx)
	wait := op.Hold.D() + 2*time.Second
	wctx, cancel := context.WithTimeout(wctx, wait)
	defer cancel()
	e := checker.Event{Waits: true, GiveUp: c.r.H.Offset(time.Now().Add(wait))}
	call := time.Now()
	lk, err := l.RWMutex(name).Lock(wctx, op.TTL.D())
	if err != nil {
		c.attempt(e, []string{name}, call, err)
		return
	}
	h := c.grant(e, []string{name}, call, lk, target{strings: []string{layout.RWKeys(rkey).Writer}, token: lk.Token()}, rf)
	sleep(ctx, op.Hold.D()/4)
	c.unlock(ctx, schedule.Op{}, h)
}

// exiting returns a Locker of op's own, over Nodes of a process that
// exits when exit is called (nil when it cannot be made).
func (c *client) exiting(op schedule.Op) (*redlock.Locker, func()) {
	nodes, exit := c.r.W.ExitingNodes(c.i)
	cfg := c.r.config(c.i)
	cfg.Observer = c.obs
	cfg.Fencing = cfg.Fencing || op.Kind == schedule.Fenced
	cfg.AutoRenew = op.Kind == schedule.Renew
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		return nil, nil
	}
	c.mu.Lock()
	c.exits = append(c.exits, exitingLocker{l: l, exit: exit})
	c.mu.Unlock()
	return l, exit
}

// settleAfterExit closes an exiting operation's Locker and exits its
// process (Close waits for the releases in flight and their retries),
// then settles the call.
func (c *client) settleAfterExit(op schedule.Op, l *redlock.Locker, before state, call time.Time, rf *ref) {
	if op.Exit {
		c.exit(l, nil)
	}
	c.settle(op, before, call, rf)
}

// exit closes l (bounded) and exits its process.
func (c *client) exit(l *redlock.Locker, _ func()) {
	c.mu.Lock()
	var exit func()
	for i, x := range c.exits {
		if x.l == l {
			exit = x.exit
			c.exits = append(c.exits[:i], c.exits[i+1:]...)
			break
		}
	}
	c.mu.Unlock()
	if exit == nil {
		return // exited already
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	l.Close(ctx)
	cancel()
	exit()
}

// hold keeps h for op.Hold: its Extends at their times (two at once when
// Along), a sample every quarter TTL, its context watched.
func (c *client) hold(ctx context.Context, op schedule.Op, h *held, rf *ref) {
	ctx = context.WithoutCancel(ctx) // the acquisition's deadline ended the wait, not the hold
	end := h.granted.Add(op.Hold.D())
	if op.Watch {
		c.watch(h)
	}
	exts := op.Extends
	every := max(op.TTL.D()/4, 10*time.Millisecond)
	next := h.granted.Add(every)
	for {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		wake := earliest(end, next)
		if len(exts) > 0 {
			wake = earliest(wake, h.granted.Add(exts[0].After.D()))
		}
		sleep(ctx, wake.Sub(now))
		now = time.Now()
		if len(exts) > 0 && !now.Before(h.granted.Add(exts[0].After.D())) {
			batch := exts[:1]
			for len(batch) < len(exts) && exts[len(batch)].Along {
				batch = exts[:len(batch)+1]
			}
			exts = exts[len(batch):]
			c.extendAll(ctx, h, batch, rf)
		}
		if !now.Before(next) {
			h.sample()
			next = now.Add(every)
		}
	}
}

// extendAll runs the Extends of batch at once, then samples.
func (c *client) extendAll(ctx context.Context, h *held, batch []schedule.Extend, rf *ref) {
	var wg sync.WaitGroup
	for _, x := range batch {
		wg.Go(func() {
			ectx := context.WithValue(ctx, refKey{}, rf)
			if x.Ended {
				cctx, cancel := context.WithCancel(ectx)
				cancel()
				ectx = cctx
			}
			h.lk.Extend(ectx, x.TTL.D())
			h.extended()
		})
	}
	wg.Wait()
	h.sample()
}

// watch notes when h's Lock.Context ends (context-within-until).
func (c *client) watch(h *held) {
	lctx, cancel := h.lk.Context(context.Background())
	go func() {
		var at time.Time
		select {
		case <-lctx.Done():
			at = time.Now().Add(-time.Nanosecond)
		case <-c.r.stop:
			at = time.Now() // still live when the run ended
		}
		for _, id := range h.ids {
			c.r.H.CtxLive(id, at)
		}
		cancel()
	}()
}

// unlock records the release of h and unlocks it (with an ended context
// when op says so), sampling first.
func (c *client) unlock(ctx context.Context, op schedule.Op, h *held) error {
	h.sample()
	h.release()
	uctx := context.WithoutCancel(ctx)
	if op.EndedUnlock {
		cctx, cancel := context.WithCancel(uctx)
		cancel()
		uctx = cctx
	}
	return h.lk.Unlock(uctx)
}

// multi is a multi-key lock of op.Keys (or of the client's private set).
func (c *client) multi(ctx context.Context, op schedule.Op) {
	r := c.r
	idx := op.Keys
	if op.Key < 0 || len(idx) == 0 {
		idx = []int{0, 1}
	}
	names := make([]string, len(idx))
	rkeys := make([]string, len(idx))
	for j, k := range idx {
		names[j] = multiKey(k, c.i, op.Key < 0)
		rkeys[j] = r.S.Lib.Prefix + names[j]
	}
	l := c.base
	before := c.snapshot(op, rkeys)
	cctx, cancel, rf, giveUp := c.callCtx(ctx, op)
	defer cancel()
	e := checker.Event{Waits: !op.Try, GiveUp: giveUp}
	call := time.Now()
	var lk *redlock.Lock
	var err error
	if op.Try {
		lk, err = l.TryLockMulti(cctx, names, op.TTL.D(), c.record(op)...)
	} else {
		lk, err = l.LockMulti(cctx, names, op.TTL.D(), c.record(op)...)
	}
	if err != nil {
		c.attempt(e, names, call, err)
		c.settle(op, before, call, rf)
		return
	}
	h := c.grant(e, names, call, lk, target{strings: rkeys, token: lk.Token()}, rf)
	c.hold(cctx, op, h, rf)
	c.unlock(ctx, op, h)
	c.settle(op, before, call, rf)
}

// reentrant is an owner's outer hold with nested holds inside it; with
// Stall, the outer hold expires while its holder stalls, the same owner
// is taken afresh (a retried job) by another client, and then the stalled
// hold's Unlock comes.
func (c *client) reentrant(ctx context.Context, op schedule.Op) {
	r := c.r
	name := keyName(op.Kind, op.Key, c.i)
	rkey := r.S.Lib.Prefix + name
	owner := fmt.Sprintf("owner-%d", op.Owner)
	l := c.base
	rn := l.Reentrant(name, owner)
	e := checker.Event{Owner: owner, Waits: !op.Try}
	before := c.snapshot(op, []string{rkey})
	take := func(ctx context.Context, rn *redlock.Reentrant, try bool, ttl time.Duration, opts ...redlock.Option) (*redlock.Lock, error) {
		if try {
			return rn.TryLock(ctx, ttl, opts...)
		}
		return rn.Lock(ctx, ttl, opts...)
	}
	cctx, cancel, rf, giveUp := c.callCtx(ctx, op)
	defer cancel()
	e.GiveUp = giveUp
	call := time.Now()
	lk, err := take(cctx, rn, op.Try, op.TTL.D(), c.record(op)...)
	if err != nil {
		c.attempt(e, []string{name}, call, err)
		c.settle(op, before, call, rf)
		return
	}
	t := target{hash: rkey, owner: owner}
	h := c.grant(e, []string{name}, call, lk, t, rf)
	// Nested holds run one after another beside the outer hold's own
	// life (its Extends); a stalled holder takes none.
	var wg sync.WaitGroup
	nested := op.Nested
	if op.Stall {
		nested = nil
	}
	wg.Go(func() {
		for _, nd := range nested {
			sleep(ctx, time.Until(h.granted.Add(nd.After.D())))
			nctx, nrf := withRef(context.WithoutCancel(ctx))
			ncall := time.Now()
			ne := checker.Event{Owner: owner}
			inner, err := rn.TryLock(nctx, nd.TTL.D())
			if err != nil {
				c.attempt(ne, []string{name}, ncall, err)
				continue
			}
			ih := c.grant(ne, []string{name}, ncall, inner, t, nrf)
			if nd.Extend > 0 {
				inner.Extend(context.WithValue(nctx, refKey{}, nrf), nd.Extend.D())
				ih.sample()
				h.sample()
			}
			sleep(ctx, nd.Hold.D())
			ih.release()
			inner.Unlock(context.WithoutCancel(ctx))
			h.sample()
		}
	})
	if op.Stall {
		// The holder stalls past its hold's expiry on every master.
		sleep(ctx, time.Until(h.lk.Until().Add(op.TTL.D()/10+50*time.Millisecond)))
		other := r.clients[(c.i+1)%len(r.clients)]
		rctx, rcancel, rrf, _ := other.callCtx(ctx, schedule.Op{Wait: op.Wait})
		rcall := time.Now()
		again, err := take(rctx, other.base.Reentrant(name, owner), false, op.TTL.D())
		rcancel()
		if err != nil {
			other.attempt(checker.Event{Owner: owner, Waits: true}, []string{name}, rcall, err)
		} else {
			ah := other.grant(checker.Event{Owner: owner, Waits: true}, []string{name}, rcall, again, t, rrf)
			h.release()
			lk.Unlock(context.WithoutCancel(ctx)) // the stalled hold's late Unlock
			ah.sample()
			sleep(ctx, op.Hold.D()/2)
			other.unlock(ctx, schedule.Op{}, ah)
			wg.Wait()
			c.settle(op, before, call, rf)
			return
		}
	} else {
		c.hold(cctx, op, h, rf)
	}
	wg.Wait()
	c.unlock(ctx, op, h)
	c.settle(op, before, call, rf)
}

// do is Locker.Do: a renewed lock held while fn runs for op.Hold, or
// until fn's context ends.
func (c *client) do(ctx context.Context, op schedule.Op) {
	r := c.r
	name := keyName(op.Kind, op.Key, c.i)
	rkey := r.S.Lib.Prefix + name
	before := c.snapshot(op, []string{rkey})
	cctx, cancel, rf, giveUp := c.callCtx(ctx, schedule.Op{Wait: op.Wait})
	defer cancel()
	ttl := op.TTL.D()
	e := checker.Event{Key: name, Client: c.i, Waits: true, GiveUp: giveUp, Renewed: true, TTL: ttl}
	call := time.Now()
	granted := false
	err := c.base.Do(cctx, name, ttl, func(fctx context.Context) error {
		granted = true
		now := time.Now()
		// Do hides its Lock: its Until is at most a TTL after fn starts.
		id := r.H.GrantCall(e, call, now, now.Add(ttl-time.Millisecond))
		rf.id.Store(id)
		r.mu.Lock()
		r.grants++
		r.mu.Unlock()
		t := time.NewTimer(op.Hold.D())
		defer t.Stop()
		select {
		case <-t.C:
			r.H.CtxLive(id, time.Now()) // live up to here: it must end by the lock's Until
		case <-fctx.Done():
			r.H.CtxLive(id, time.Now().Add(-time.Nanosecond))
		}
		r.H.Release(id, time.Now())
		return nil
	})
	if !granted && err != nil {
		c.attempt(e, []string{name}, call, err)
	}
	c.settle(op, before, call, rf)
}

// resume hands a plain lock over: c takes it (TryLock), op.To Resumes it
// with its token and unlocks it; with Stale, c unlocks first and the
// Resume must fail; with Late, c Unlocks and Extends its stale Lock after
// the hand-over.
func (c *client) resume(ctx context.Context, op schedule.Op) {
	r := c.r
	name := keyName(op.Kind, op.Key, c.i)
	rkey := r.S.Lib.Prefix + name
	to := r.clients[op.To%len(r.clients)]
	cctx, cancel, rf, _ := c.callCtx(ctx, schedule.Op{Try: true})
	defer cancel()
	call := time.Now()
	e := checker.Event{}
	lk, err := c.handover(op).TryLock(cctx, name, op.TTL.D())
	if err != nil {
		c.attempt(e, []string{name}, call, err)
		return
	}
	t := target{strings: []string{rkey}, token: lk.Token()}
	// The giver's hold and the taker's are one lock going on: one owner
	// to the checkers (a fenced Resume keeps the token's fence).
	one := checker.Event{Owner: "resume-" + lk.Token()}
	h := c.grant(one, []string{name}, call, lk, t, rf)
	sleep(ctx, op.Hold.D()/3)
	released := false // the giver's Unlock found its token on a quorum
	if op.Stale {
		released = c.unlock(ctx, schedule.Op{}, h) == nil
		if !released {
			// Its releases are still on their way, or will be sent
			// again: a Resume might succeed and then lose the lock to
			// them. A giver whose Unlock failed hands nothing over.
			return
		}
	} else {
		h.sample()
		h.release() // the giver's hold ends at the hand-over
	}
	tctx, tcancel, trf, _ := to.callCtx(ctx, schedule.Op{Try: true})
	defer tcancel()
	tcall := time.Now()
	taken, err := to.handover(op).Resume(tctx, name, lk.Token(), op.TTL.D())
	if err != nil {
		to.attempt(e, []string{name}, tcall, err)
		if !op.Stale {
			// A failed Resume deletes nothing: the token's key stays
			// where it landed, up to its TTL, and nobody releases it.
			r.abandon(lk.Token())
		}
		return
	}
	if op.Stale && released {
		r.violate(checker.Violation{Invariant: ResumeReleased, Key: name, Client: to.i, At: r.H.Offset(time.Now()),
			Detail: fmt.Sprintf("a Resume of the token of lock %d, released at %v, succeeded", h.ids[0], r.H.Offset(tcall))})
	}
	th := to.grant(one, []string{name}, tcall, taken, t, trf)
	to.hold(tctx, schedule.Op{Hold: op.Hold, TTL: op.TTL}, th, trf)
	to.unlock(ctx, schedule.Op{}, th)
	if !op.Late {
		return
	}
	// The taker locks the key afresh; the giver's stale Unlock and Extend
	// of its old token must neither end the new lock nor bring the old
	// token's key back.
	nctx, ncancel, nrf, _ := to.callCtx(ctx, schedule.Op{Try: true})
	defer ncancel()
	ncall := time.Now()
	again, err := to.handover(op).TryLock(nctx, name, op.TTL.D())
	if err != nil {
		to.attempt(e, []string{name}, ncall, err)
		return
	}
	nh := to.grant(e, []string{name}, ncall, again, target{strings: []string{rkey}, token: again.Token()}, nrf)
	lk.Unlock(context.WithoutCancel(ctx))
	lk.Extend(context.WithoutCancel(ctx), op.TTL.D())
	nh.sample()
	sleep(ctx, op.Hold.D()/3)
	to.unlock(ctx, schedule.Op{}, nh)
}

// earliest is the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// handover is the Locker of a hand-over: without fencing unless the
// operation asks for it (a fenced Resume's token can come out below its
// giver's after a master lost the giver's write-back: see the README's
// findings).
func (c *client) handover(op schedule.Op) *redlock.Locker {
	if op.Fenced {
		return c.fenced
	}
	return c.plain
}

// record is the options of op's acquisition: WithMetadata, naming the
// client and the operation, when op keeps a holder record (op.Record).
func (c *client) record(op schedule.Op) []redlock.Option {
	if !op.Record {
		return nil
	}
	return []redlock.Option{redlock.WithMetadata(map[string]string{"client": strconv.Itoa(c.i), "at": op.At.D().String()})}
}
