package world

import (
	"errors"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/sim/master"
)

// A link carries one client's commands to one master and the replies
// back. Each message gets a delay drawn from the World's Delay, plus what
// the link's faults add; a message may be dropped, or held by a partition
// until it heals. A command that reaches a master whose process is down
// fails (connection refused); one that reaches a frozen master runs when
// it thaws. The identity a Node reads on a new connection (INFO) comes
// with the first reply of each connection to a process.

// Errors a call may end with.
var (
	// ErrStall: no reply within the stall timeout (the Node gave up on
	// its connection; the command may still run).
	ErrStall = errors.New("sim: no reply within the stall timeout")
	// ErrReset: the connection broke (a reply lost with a reset, a
	// master restarted); the command may have run.
	ErrReset = errors.New("sim: connection reset by peer")
	// ErrRefused: the master's process is down; the command did not run.
	ErrRefused = errors.New("sim: connection refused")
	// ErrCrashed: the client crashed; nothing is sent any more.
	ErrCrashed = errors.New("sim: the client crashed")
)

// direction of a message.
type direction int

const (
	toMaster direction = iota
	toClient
)

// linkFault is one fault in force on a link.
type linkFault struct {
	from, until time.Time
	dirs        [2]bool // the directions it affects
	delay       time.Duration
	drop        float64 // probability that a message is lost
	reset       bool    // a lost reply comes back as a reset, not a stall
	cut         bool    // partition: hold (or drop, with drop = 1) every message
	spans       []*Span // its entries in the World's log
}

func (f *linkFault) active(t time.Time) bool { return !t.Before(f.from) && t.Before(f.until) }

// link is one client's path to one master.
type link struct {
	client, master int
	faults         []*linkFault
	lastArrival    [2]time.Time      // FIFO: the latest arrival scheduled per direction
	connRun        string            // the process the client's connection knows ("": reconnect)
	ident          nodeutil.Identity // what the Node read of the master on its newest connection
	inflight       int               // messages in the network
	pending        map[*call]struct{}
}

// call is one command a Node sent.
type call struct {
	w          *World
	l          *link
	src        string   // a script, or "" for a command
	keys, args []string // KEYS and ARGV, or the command
	done       Completion
	completed  bool
	sentAt     time.Time
	// deadline is when the Node gives up on the call (its stall timeout),
	// unless its outcome came; stalling: that is scheduled.
	deadline time.Time
	stalling bool
	// confirm, when set, makes the call a durable confirmation.
	confirm *confirm
}

// Completion receives a call's outcome once (redlock.Completion).
type Completion interface {
	Complete(reply any, err error)
}

// complete completes c once; later outcomes are dropped. It reports
// whether this one was the first.
func (c *call) complete(reply any, err error) bool {
	w := c.w
	w.mu.Lock()
	if c.completed {
		w.mu.Unlock()
		return false
	}
	c.completed = true
	delete(c.l.pending, c)
	if err != nil && !errors.Is(err, ErrCrashed) {
		// The Node drops a connection that failed. What it sent there
		// may still arrive, and nothing orders it against what the next
		// connection carries: FIFO starts again.
		c.l.connRun = ""
		c.l.lastArrival = [2]time.Time{}
	}
	w.mu.Unlock()
	c.done.Complete(reply, err)
	return true
}

// delayLocked is the delay of a message leaving at t in direction d.
func (l *link) delayLocked(w *World, t time.Time, d direction) time.Duration {
	delay := w.cfg.Delay.draw(w.rng)
	for _, f := range l.faults {
		if f.dirs[d] && f.active(t) {
			delay += f.delay
		}
	}
	return delay
}

// dropLocked reports whether a message leaving at t in direction d is
// lost, and whether as a reset.
func (l *link) dropLocked(w *World, t time.Time, d direction) (lost, reset bool) {
	for _, f := range l.faults {
		if f.dirs[d] && f.active(t) && f.drop > 0 && !f.cut && w.rng.Float64() < f.drop {
			return true, f.reset
		}
	}
	return false, false
}

// cutLocked returns the end of the partition in force at t in direction
// d (zero: none), and whether it drops rather than holds.
func (l *link) cutLocked(t time.Time, d direction) (until time.Time, drop bool) {
	for _, f := range l.faults {
		if f.dirs[d] && f.cut && f.active(t) {
			if f.until.After(until) {
				until = f.until
			}
			drop = drop || f.drop >= 1
		}
	}
	return until, drop
}

// arrivalLocked is when a message leaving at t in direction d arrives.
func (l *link) arrivalLocked(w *World, t time.Time, d direction) time.Time {
	at := t.Add(l.delayLocked(w, t, d))
	if w.cfg.FIFO && at.Before(l.lastArrival[d]) {
		at = l.lastArrival[d]
	}
	if at.After(l.lastArrival[d]) {
		l.lastArrival[d] = at
	}
	return at
}

// pruneLocked drops the faults that ended before t.
func (l *link) pruneLocked(t time.Time) {
	kept := l.faults[:0]
	for _, f := range l.faults {
		if f.until.After(t) {
			kept = append(kept, f)
		}
	}
	clear(l.faults[len(kept):])
	l.faults = kept
}

// send puts c on its link at now.
func (w *World) send(c *call) {
	if w.OnSend != nil && c.src != "" {
		w.OnSend(c.l.client, c.keys)
	}
	w.mu.Lock()
	now := time.Now()
	cl := w.clients[c.l.client]
	if cl.crashed || w.stopped {
		w.mu.Unlock()
		c.done.Complete(nil, ErrCrashed)
		return
	}
	l := c.l
	l.pruneLocked(now)
	w.sent++
	c.sentAt = now
	if l.pending == nil {
		l.pending = map[*call]struct{}{}
	}
	l.pending[c] = struct{}{}
	dep := now
	if cl.frozenUntil.After(dep) {
		dep = cl.frozenUntil
	}
	// The Node gives up on the call after the stall timeout (a frozen
	// client's timer fires once it thaws); a confirmation waits for its
	// WAITAOF's timeout first.
	c.deadline = dep.Add(w.cfg.Stall)
	if c.confirm != nil {
		c.deadline = c.deadline.Add(c.confirm.wait)
	}
	l.inflight++
	if lost, _ := l.dropLocked(w, dep, toMaster); lost {
		l.inflight--
		w.dropped++
		w.stallLocked(c)
		w.mu.Unlock()
		return
	}
	w.stepLocked(c, l.arrivalLocked(w, dep, toMaster), func() { w.arrive(c) })
	w.mu.Unlock()
}

// stepLocked schedules the next step of c at t, and the Node's stall
// timeout when t comes after it.
func (w *World) stepLocked(c *call, t time.Time, f func()) {
	w.atLocked(t, f)
	if t.After(c.deadline) {
		w.stallLocked(c)
	}
}

// stallLocked schedules the Node's stall timeout of c: its outcome will
// not come before it.
func (w *World) stallLocked(c *call) {
	if c.stalling {
		return
	}
	c.stalling = true
	w.atLocked(c.deadline, func() { w.deliverOutcome(c, nil, ErrStall, nil) })
}

// arrive runs c on its master, at its arrival.
func (w *World) arrive(c *call) {
	w.mu.Lock()
	now := time.Now()
	l := c.l
	s := w.masters[l.master]
	if until, drop := l.cutLocked(now, toMaster); !until.IsZero() {
		if drop {
			l.inflight--
			w.dropped++
			w.stallLocked(c)
		} else {
			w.stepLocked(c, until.Add(w.cfg.Delay.draw(w.rng)), func() { w.arrive(c) })
		}
		w.mu.Unlock()
		return
	}
	if s.frozenUntil.After(now) {
		w.stepLocked(c, s.frozenUntil, func() { w.arrive(c) })
		w.mu.Unlock()
		return
	}
	if !s.m.Up() {
		w.replyLocked(c, now, nil, ErrRefused, nil)
		w.mu.Unlock()
		return
	}
	if c.confirm != nil {
		w.confirmArrivedLocked(c, s, now)
		w.mu.Unlock()
		return
	}
	var info *identity
	if l.connRun != s.m.RunID() {
		info = s.identityLocked(now)
	}
	if w.BeforeExec != nil {
		w.BeforeExec(Exec{At: now, Client: l.client, Master: l.master, Src: c.src, Keys: c.keys, Args: c.args, Late: c.completed})
	}
	var reply any
	publish := func(channel, msg string) int64 { return w.publishLocked(s, channel, now) }
	if c.src != "" {
		src := c.src
		if w.cfg.Rewrite != nil {
			src = w.cfg.Rewrite(src)
		}
		reply = s.m.Eval(now, src, c.keys, c.args, publish)
	} else {
		reply = s.m.Do(now, c.args, publish)
	}
	if c.completed {
		w.lateExec++
	}
	if w.OnExec != nil {
		w.OnExec(Exec{At: now, Client: l.client, Master: l.master, Src: c.src, Keys: c.keys, Args: c.args, Reply: reply, Late: c.completed})
	}
	var err error
	if e, ok := reply.(master.Error); ok {
		reply, err = nil, e
	}
	w.replyLocked(c, now, reply, err, info)
	w.mu.Unlock()
}

// replyLocked sends the outcome of c back from its master at now.
func (w *World) replyLocked(c *call, now time.Time, reply any, err error, info *identity) {
	l := c.l
	if lost, reset := l.dropLocked(w, now, toClient); lost {
		w.dropped++
		if !reset {
			l.inflight-- // the Node's stall timer fails the call
			w.stallLocked(c)
			return
		}
		reply, err, info = nil, ErrReset, nil
	}
	if s, ok := reply.(master.Status); ok {
		reply = string(s)
	}
	w.stepLocked(c, l.arrivalLocked(w, now, toClient), func() { w.returned(c, reply, err, info) })
}

// returned delivers the outcome of c to its client, at its arrival.
func (w *World) returned(c *call, reply any, err error, info *identity) {
	w.mu.Lock()
	now := time.Now()
	l := c.l
	if until, drop := l.cutLocked(now, toClient); !until.IsZero() {
		if drop {
			l.inflight--
			w.dropped++
			w.stallLocked(c)
		} else {
			w.stepLocked(c, until.Add(w.cfg.Delay.draw(w.rng)), func() { w.returned(c, reply, err, info) })
		}
		w.mu.Unlock()
		return
	}
	if cl := w.clients[l.client]; cl.frozenUntil.After(now) {
		w.stepLocked(c, cl.frozenUntil, func() { w.returned(c, reply, err, info) })
		w.mu.Unlock()
		return
	}
	l.inflight--
	w.mu.Unlock()
	w.deliverOutcome(c, reply, err, info)
}

// deliverOutcome completes c on its client: the identity read on a new
// connection first, then the reply.
func (w *World) deliverOutcome(c *call, reply any, err error, info *identity) {
	w.mu.Lock()
	if c.completed {
		w.mu.Unlock()
		return
	}
	if cl := w.clients[c.l.client]; cl.frozenUntil.After(time.Now()) {
		until := cl.frozenUntil
		w.atLocked(until, func() { w.deliverOutcome(c, reply, err, info) })
		w.mu.Unlock()
		return
	}
	if info != nil && err == nil {
		c.l.connRun = info.run
	}
	w.mu.Unlock()
	if info != nil && err == nil {
		if info.refused != nil {
			c.l.ident.Refused(info.refused)
		} else {
			c.l.ident.Note(info.server, info.persistence, info.appendfsync)
		}
	}
	c.complete(reply, err)
}
