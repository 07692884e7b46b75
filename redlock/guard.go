package redlock

// The restart guard. A master that restarts without having persisted its
// writes (no AOF, or appendfsync everysec and the last second lost) comes
// back without locks it held, and would grant them again: a second holder,
// unless the lock's other masters refuse. Redlock's answer is operational
// (keep a restarted master down for the longest TTL); the guard does it
// from the clients, for every process, also one that first meets the
// master after its restart (a "redlock run", a service that starts
// later), through every Node that reports its master's identity.
//
// # The masters remember each other
//
// Each master keeps a record (layout.Registry: a hash that never expires)
// of the run id that a client registered for it, whether that run
// persisted every write (AOF with appendfsync always), and the longest TTL
// any client recorded on it. Two rules keep it:
//
//  R1. A master's grant (an acquire, an Extend, a renewal, a Resume) with
//      TTL t counts only once its record names its current run id (as its
//      Node read it: Abilities.Identity) and holds a TTL >= t. A client
//      writes it before the grant is sent (prepare), and never counts a
//      grant for a run id other than the one it registered or read.
//  R2. A client registers a run id only once it judged that the master
//      lost no grant that may still be valid: the record already names it;
//      or the master restarted with every write kept (the record's run
//      and the current one both persist every write); or no master it
//      read has a record, nor had one when this Locker read it before, and
//      it read at least N-Q+1 of the other masters, for a quorum Q (a
//      fresh deployment); or the master has been up for the longest TTL
//      recorded (or used by this Locker, or RestartGuard) since it
//      started. Until then its grants do not count (ErrRestarted).
//
// Why that is enough. Take a lock L granted with TTL t by a quorum S,
// every master of S with a record that covers t (R1), and a master M of S
// that restarts as a new process and forgets L. Any client that later
// counts a grant of M's new process registered it, or read its
// registration, and its registration was judged by R2. Either the record
// still names the old run (M kept its data): the new run counts at once
// only if both persist every write, when M still holds L. Or the record
// is gone (M lost its data). The client cannot have taken the deployment
// for a fresh one: S has Q-1 masters besides M, all with records, and
// N-Q+1 of the N-1 others include one of them (unless it lost its data
// too). So it holds M back until M has been up for the longest TTL it
// knows (recorded on a master it read, used by itself, the grant at
// hand's included, or RestartGuard).
// That covers t as soon as the client read one master that recorded t:
// every master of S did, and so did every master that answered the client
// that first used t (a client records a longer TTL on every master that
// answers it, not on its quorum only). L expired by then, on every master.
// A client that reads too few masters to tell a fresh deployment from a
// used one holds a master without a record back the same way: a fresh
// deployment with a master down at its first lock waits, once, for the
// longest TTL it uses from the masters' start.
//
// What the guard leaves to the operator, then:
//
//   - every master a client can read losing its data within the longest
//     TTL (all restarted at once, or a majority restarted while the others
//     are cut off): nothing then remembers the locks, and the deployment
//     looks fresh;
//   - a TTL t longer than the client's own and recorded on none of the
//     masters it reads: the client that used t reached, when it first
//     used it, none of them but M (a partition between the clients at that
//     moment, lasting until M restarts), or it runs with the guard off
//     (RestartGuard < 0 records nothing). RestartGuard set to the longest
//     TTL any client uses covers it;
//   - a master whose appendfsync is changed at run time (CONFIG SET)
//     without a restart keeps the persistence its record says until a
//     client registers it again;
//   - with one master (N = 1) nothing else remembers it: a master without
//     a record is taken for a fresh one; set RestartGuard > 0 there.
//
// Config.RestartGuard: 0 (the default) is the above; > 0 adds that every
// master that does not persist every write is held back until it has been
// up for that long, whatever the records say; < 0 turns the guard off (for
// masters that operations keep down for the TTL after a restart), as
// Config.FsyncAlways does (every master declared to persist every write).
//
// What it costs: once per master process, a read of every master's
// record (one round) and a write of its own (one more), before the first
// grant; once per longer TTL, a write. Each grant is judged by loads of
// the master's verdict and identity, nothing sent.

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// ErrRestarted is the error of a master's grant that the restart guard
// did not count: the master restarted too recently (see
// Config.RestartGuard), or this client has not yet checked its record.
var ErrRestarted = errors.New("redlock: master restarted recently: its grants do not count yet")

// errUnchecked is the error of a grant by a master process whose record
// this client has not yet checked (it is checked before the next attempt).
var errUnchecked = fmt.Errorf("%w (its record is not checked yet)", ErrRestarted)

// guardState is a Locker's restart guard.
type guardState struct {
	on      bool
	strict  time.Duration // > 0: guard every master up for less, whatever the records say
	key     string        // the record's name on every master (layout.Registry)
	longest atomic.Int64  // ms: the longest TTL this Locker used, uses now, or any record held
	used    atomic.Bool   // some master had a record: the deployment was used

	mu      sync.Mutex
	running chan struct{} // closed when the round in flight ends; nil: none
	last    time.Time     // when the last round ended
}

// verdict is what the guard decided of one master process.
type verdict struct {
	run string // the master process it is about (Identity.RunID)
	// countFrom: its grants count from then (zero: at once).
	countFrom time.Time
	// recorded is the longest TTL, in ms, its record holds for run: 0
	// while the record does not name run. Grants count up to it (R1).
	recorded int64
	// err, when set, is why the master cannot be judged at all (its
	// identity cannot be read): a misconfiguration, matching ErrInvalid.
	err error
}

// record is one master's record as guard_read read it; nil: none.
type record struct {
	run, fsync string
	ttl        int64
}

// judge turns m's yes vote on c into a failed vote unless the guard lets
// it count: the master process is the one the verdict is about, its
// record covers the call's TTL, and, for an acquire, its time has come.
// It sends nothing. When the verdict is about another process than the
// one that answered (the master restarted since, and this grant came on
// the first connection to the new process), it reports stale instead: the
// caller checks the master's record (recheck) and judges again.
func (m *master) judge(c *call, v quorum.Vote) (_ quorum.Vote, stale bool) {
	g := &m.l.guard
	if !v.Yes || !g.on {
		return v, false
	}
	vd := m.verdict.Load()
	if vd != nil && vd.err != nil {
		return quorum.Vote{Err: vd.err}, false
	}
	id, err := m.ab.Identity()
	switch {
	case err != nil:
		return quorum.Vote{Err: fmt.Errorf("%w: %w", errUnchecked, err)}, false
	case vd == nil || vd.run != id.RunID:
		return v, true
	case c.acquire && time.Now().Before(vd.countFrom):
		return quorum.Vote{Err: fmt.Errorf("%w: up since %v, grants count from %v", ErrRestarted, id.Started.Round(time.Second), vd.countFrom.Round(time.Second))}, false
	case vd.recorded < c.grant:
		return v, true
	}
	return v, false
}

// recheck is judge's second chance for a grant whose master's verdict was
// stale: it checks the master's record alone (checkAlone), bounded by the
// node timeout, then judges the vote again and delivers it (through the
// durable confirmation when c needs one). It runs on a goroutine of its
// own: the reply came on a connection's reader.
func (m *master) recheck(s *slot, v quorum.Vote) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.c.ctx), m.l.nodeTimeout)
	m.checkAlone(ctx, s.c.grant)
	cancel()
	v, stale := m.judge(s.c, v)
	switch {
	case stale:
		v = quorum.Vote{Err: errUnchecked}
		m.l.guardRound(context.WithoutCancel(s.c.ctx), false) // the whole round, for the next call
	case v.Yes && s.c.confirms:
		m.confirm(s, v)
		return
	}
	m.deliver(s, v)
}

// checkAlone reads m's record and decides on its current process from it
// and what the Locker knows of the others (whether the deployment was
// used, the longest TTL): enough but for a master without a record in a
// deployment not known to be used, which takes a round of every master.
// A master whose grants count and whose record does not name it or cover
// ms is registered. Concurrent calls for one master share one check.
func (m *master) checkAlone(ctx context.Context, ms int64) {
	m.checkMu.Lock()
	if m.checking != nil {
		ch := m.checking
		m.checkMu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		return
	}
	ch := make(chan struct{})
	m.checking = ch
	m.checkMu.Unlock()
	defer func() {
		m.checkMu.Lock()
		m.checking = nil
		m.checkMu.Unlock()
		close(ch)
	}()
	l, g := m.l, &m.l.guard
	read := l.newCall(opGuard, guardReadScript, g.key, nil)
	read.vote = readRecord
	v := l.gatherAll(ctx, read, []int{m.i}).Votes[0]
	if v.Err != nil {
		return
	}
	rec, _ := v.Value.(*record)
	if rec != nil {
		g.noteRecord(rec)
	}
	id, err := m.ab.Identity()
	if err != nil || (rec == nil && !g.used.Load()) {
		return // a misconfiguration, or a question for the whole round
	}
	vd := g.decide(rec, id, false, l.driftFactor)
	m.verdict.Store(vd)
	if want := max(g.longest.Load(), ms); !time.Now().Before(vd.countFrom) && vd.recorded < want {
		recs := make([]*record, len(l.masters))
		recs[m.i] = rec
		l.writeRecords(ctx, []int{m.i}, recs, want)
	}
}

// readiness is what a master's verdict says of its grants of some TTL.
type readiness int

const (
	ready    readiness = iota // they count now
	heldBack                  // held back until a time: no round can change that before
	stale                     // a round may change it: its process or record is not checked
	silent                    // its process is unknown (no answer yet): a round may not help
)

// readiness tells whether m's grants of ms count now, as judge would see
// them, or what keeps them from counting.
func (m *master) readiness(ms int64) readiness {
	vd := m.verdict.Load()
	id, err := m.ab.Identity()
	switch {
	case err != nil && vd == nil:
		return silent
	case vd == nil || err != nil || id.RunID != vd.run || vd.err != nil:
		return stale
	case time.Now().Before(vd.countFrom):
		return heldBack
	case vd.recorded < ms:
		return stale
	}
	return ready
}

// prepare runs before a grant of ms is sent: it records ms as used, and
// when fewer than a quorum of the masters can grant it now and a round of
// the records may change that (their records not read, or not covering
// ms), it runs the round first (bounded by the node timeouts); otherwise
// it starts a round in the background for the masters that need one, if
// any.
func (l *Locker) prepare(ctx context.Context, ms int64) {
	g := &l.guard
	if !g.on {
		return
	}
	raise(&g.longest, ms)
	usable, stales, silents := 0, 0, 0
	for _, m := range l.masters {
		switch m.readiness(ms) {
		case ready:
			usable++
		case stale:
			stales++
		case silent:
			silents++
		}
	}
	if stales+silents == 0 {
		return
	}
	g.mu.Lock()
	never := g.last.IsZero() // no round has ended yet: one in flight is the first
	g.mu.Unlock()
	if usable >= l.quorum || (stales == 0 && !never) {
		// Enough count now, or only masters that never answered are left
		// (down, or cut off) and a round read the others before: a round
		// in the background, at most every guardMinSpacing, learns of them
		// once they answer.
		l.guardRound(ctx, false)
		return
	}
	// A round that was in flight may have read the masters before what
	// made them stale (a restart): once it is over, one of our own.
	if !l.guardRound(ctx, true) {
		l.guardRound(ctx, true)
	}
}

// guardMinSpacing is the least time between the starts of two rounds that
// were not needed for the call at hand (a master down, or held back).
const guardMinSpacing = 250 * time.Millisecond

// guardRound runs a round of the records (syncRecords) unless one is in
// flight, which it joins instead; wait: the caller waits for it (or ctx),
// else it runs in the background, at most every guardMinSpacing. It
// reports whether it ran a round of its own.
func (l *Locker) guardRound(ctx context.Context, wait bool) (own bool) {
	g := &l.guard
	g.mu.Lock()
	if running := g.running; running != nil {
		g.mu.Unlock()
		if wait {
			select {
			case <-running:
			case <-ctx.Done():
			}
		}
		return false
	}
	if !wait && time.Since(g.last) < guardMinSpacing {
		g.mu.Unlock()
		return false
	}
	running := make(chan struct{})
	g.running = running
	g.mu.Unlock()
	l.inflight.add()
	round := func() {
		defer l.inflight.done()
		l.syncRecords(context.WithoutCancel(ctx))
		g.mu.Lock()
		g.running, g.last = nil, time.Now()
		g.mu.Unlock()
		close(running)
	}
	go round()
	if wait {
		select {
		case <-running:
		case <-ctx.Done():
		}
	}
	return true
}

// syncRecords is one round of the records: it reads every master's record
// (waiting up to the node timeout for all of them), decides for each
// master that answered whether its grants count (R2), and writes the
// records of those whose grants count but whose record does not name
// them or cover the longest TTL yet (R1).
func (l *Locker) syncRecords(ctx context.Context) {
	g := &l.guard
	n := len(l.masters)
	recs := make([]*record, n)
	res := l.readRecords(ctx)
	for i, v := range res.Votes {
		if !res.Answered[i] || v.Err != nil {
			continue
		}
		if rec, _ := v.Value.(*record); rec != nil {
			recs[i] = rec
			g.noteRecord(rec)
		}
	}
	want := g.longest.Load()
	var writes []int
	for i, m := range l.masters {
		if !res.Answered[i] || res.Votes[i].Err != nil {
			continue
		}
		id, err := m.ab.Identity()
		if err != nil {
			// The master answered, and its Node still cannot say which
			// process it is: INFO refused. A misconfiguration.
			m.verdict.Store(&verdict{err: fmt.Errorf("%w: master %s: %w; the restart guard cannot apply to it: let the client's user run INFO (and CONFIG GET), or turn the guard off (Config.RestartGuard < 0, or Config.FsyncAlways for masters that persist every write)", ErrInvalid, m.addr(), err)})
			continue
		}
		vd := g.decide(recs[i], id, l.freshDeployment(res, i), l.driftFactor)
		m.verdict.Store(vd)
		if !time.Now().Before(vd.countFrom) && vd.recorded < want {
			writes = append(writes, i)
		}
	}
	if len(writes) > 0 {
		l.writeRecords(ctx, writes, recs, want)
	}
}

// readRecords reads every master's record, waiting up to the node timeout
// for all of them; the reads that failed at once (the connection broke: a
// master that restarted) go again, once: a read changes nothing.
func (l *Locker) readRecords(ctx context.Context) *quorum.Result {
	send := func(which []int) *quorum.Result {
		read := l.newCall(opGuard, guardReadScript, l.guard.key, nil)
		read.vote = readRecord
		return l.gatherAll(ctx, read, which)
	}
	res := send(nil)
	var again []int
	for i, v := range res.Votes {
		if v.Err != nil && !errors.Is(v.Err, quorum.ErrNoAnswer) {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		second := send(again)
		for j, i := range again {
			if v := second.Votes[j]; v.Err == nil {
				res.Votes[i] = v
			}
		}
	}
	return res
}

// freshDeployment reports whether the read res (of every master) may take
// the deployment for a fresh one when deciding on master i: no master had
// a record (nor did one when this Locker read before), and at least N-Q+1
// of the other masters answered, so that they include one master of any
// quorum that holds a lock with i (see R2). With one master nothing else
// can tell: it is taken for fresh.
func (l *Locker) freshDeployment(res *quorum.Result, i int) bool {
	if l.guard.used.Load() {
		return false
	}
	n := len(l.masters)
	others := 0
	for j, v := range res.Votes {
		if j != i && res.Answered[j] && v.Err == nil {
			others++
		}
	}
	return n == 1 || others >= n-l.quorum+1
}

// noteRecord learns from a master's record that the deployment was used,
// and the longest TTL it holds.
func (g *guardState) noteRecord(rec *record) {
	g.used.Store(true)
	raise(&g.longest, rec.ttl)
}

// raise makes ms the longest TTL in to, if it is longer.
func raise(to *atomic.Int64, ms int64) {
	for cur := to.Load(); ms > cur && !to.CompareAndSwap(cur, ms); cur = to.Load() {
	}
}

// decide is the verdict on the master process id, whose record is rec
// (nil: none), once every master that answered was read (R2); fresh
// reports whether enough of the others answered, all without a record, to
// take the deployment for a fresh one.
func (g *guardState) decide(rec *record, id Identity, fresh bool, driftFactor float64) *verdict {
	vd := &verdict{run: id.RunID}
	always := id.PersistsEveryWrite()
	// A master that may have lost grants is held back until the longest
	// of them expired: the TTLs recorded on the masters read, and the
	// longest this Locker uses, the grant at hand's included: another
	// client of the same lock, with the same TTL, may have held it there,
	// and recorded it only on masters this client cannot read.
	longest := time.Duration(g.longest.Load()) * time.Millisecond
	held := id.Started.Add(longest + clock.Drift(longest, driftFactor))
	switch {
	case rec != nil && rec.run == id.RunID:
		vd.recorded = rec.ttl // registered: it lost nothing since
	case rec != nil && rec.fsync == fsyncAlways && always:
		// restarted, with every write kept
	case rec != nil || g.used.Load():
		vd.countFrom = held // restarted (the record left), or lost its record
	case fresh:
		// a fresh deployment: no master that answered was ever used
	default:
		vd.countFrom = held // too few answered to tell
	}
	if g.strict > 0 && !always {
		if from := id.Started.Add(g.strict); from.After(vd.countFrom) {
			vd.countFrom = from
		}
	}
	return vd
}

// fsyncAlways is a record's persistence for a run that persists every
// write; fsyncOther for any other.
const (
	fsyncAlways = "always"
	fsyncOther  = "other"
)

// writeRecords registers the current process of each master in writes,
// with a TTL of want, in its record (read as recs), and stores what the
// master answered in its verdict. Each master's write has arguments of its
// own (its run id): one call each, all at once.
func (l *Locker) writeRecords(ctx context.Context, writes []int, recs []*record, want int64) {
	var wg sync.WaitGroup
	for _, i := range writes {
		m := l.masters[i]
		vd := m.verdict.Load()
		id, _ := m.ab.Identity()
		fsync, read := fsyncOther, ""
		if id.PersistsEveryWrite() {
			fsync = fsyncAlways
		}
		if rec := recs[i]; rec != nil {
			read = rec.run
		}
		write := l.newCall(opGuard, guardWriteScript, l.guard.key, nil, vd.run, fsync, want, read)
		write.vote = wroteRecord
		wg.Go(func() {
			v := l.gatherAll(ctx, write, []int{i}).Votes[0]
			if v.Err != nil || !v.Yes {
				return // not written: the next round reads it again
			}
			if cur := m.verdict.Load(); cur == vd {
				next := *vd
				next.recorded = v.Value.(int64)
				m.verdict.CompareAndSwap(cur, &next)
			}
		})
	}
	wg.Wait()
}

// readRecord reads guard_read's reply: a yes whose Value is the *record,
// nil when there is none.
func readRecord(reply any, err error) quorum.Vote {
	if err != nil {
		return quorum.Vote{Err: err}
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 3 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected record %v", reply)}
	}
	ttl, ok := r[2].(int64)
	if !ok {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected record %v", reply)}
	}
	run := replyString(r[0])
	if run == "" {
		return quorum.Vote{Yes: true}
	}
	return quorum.Vote{Yes: true, Value: &record{run: run, fsync: replyString(r[1]), ttl: ttl}}
}

// wroteRecord reads guard_write's reply: a yes carrying the TTL the record
// holds when it was written, a no when it names another run.
func wroteRecord(reply any, err error) quorum.Vote {
	if err != nil {
		return quorum.Vote{Err: err}
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 3 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected record write %v", reply)}
	}
	ttl, ok1 := r[1].(int64)
	written, ok2 := r[2].(int64)
	if !ok1 || !ok2 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected record write %v", reply)}
	}
	return quorum.Vote{Yes: written == 1, Value: ttl}
}

// replyString is a bulk string reply as a string, whichever way the Node
// gives it.
func replyString(r any) string {
	switch s := r.(type) {
	case string:
		return s
	case []byte:
		return string(s)
	}
	return ""
}
