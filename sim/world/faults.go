package world

import (
	"time"

	"github.com/quorumlock/quorumlock/sim/master"
)

// Faults, applied at the moment they are called (the schedule calls them
// from events at their times).

// LinkFault describes a fault of links.
type LinkFault struct {
	// Clients and Masters select the links (client x master).
	Clients, Masters []int
	// For is how long it lasts.
	For time.Duration
	// ToMaster and ToClient select the directions.
	ToMaster, ToClient bool
	// Delay is added to every message.
	Delay time.Duration
	// Drop is the probability that a message is lost; with Cut, 1 drops
	// what the cut holds.
	Drop float64
	// Reset: a reply lost comes back as a connection reset at once.
	Reset bool
	// Cut: a partition, which holds every message until it heals (or
	// drops it, with Drop 1).
	Cut bool
}

// Span is a fault's time on a link or a master, as the World logs it.
type Span struct {
	Client, Master int // -1: every client (a master's fault) or every master (a client's)
	From, Until    time.Time
	Kind           string
	// Lossy: the master lost data (a power loss, a failover).
	Lossy bool
}

// logLocked adds a span to the log, and returns it for a later end.
func (w *World) logLocked(sp Span) *Span {
	p := &sp
	w.spans = append(w.spans, p)
	return p
}

// Spans returns the faults logged so far that overlap [from, to] and touch
// client c's link to master m (c or m -1: any).
func (w *World) Spans(c, m int, from, to time.Time) []Span {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Span
	for _, sp := range w.spans {
		if (c >= 0 && sp.Client >= 0 && sp.Client != c) || (m >= 0 && sp.Master >= 0 && sp.Master != m) {
			continue
		}
		if sp.From.After(to) || sp.Until.Before(from) {
			continue
		}
		out = append(out, *sp)
	}
	return out
}

// QuietSince is when the last fault touching client c (its links, or a
// master) ended; zero when none did. ok is false while one is in force.
func (w *World) QuietSince(c int) (since time.Time, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for _, sp := range w.spans {
		if sp.Client >= 0 && sp.Client != c {
			continue
		}
		if sp.Until.After(now) {
			return time.Time{}, false
		}
		if sp.Until.After(since) {
			since = sp.Until
		}
	}
	return since, true
}

// Link puts f in force from now.
func (w *World) Link(f LinkFault) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	lf := &linkFault{from: now, until: now.Add(f.For), dirs: [2]bool{f.ToMaster, f.ToClient}, delay: f.Delay, drop: f.Drop, reset: f.Reset, cut: f.Cut}
	kind := "delay"
	switch {
	case f.Cut:
		kind = "cut"
	case f.Drop > 0:
		kind = "drop"
	}
	for _, c := range f.Clients {
		for _, m := range f.Masters {
			l := w.links[c][m]
			l.faults = append(l.faults, lf)
			lf.spans = append(lf.spans, w.logLocked(Span{Client: c, Master: m, From: now, Until: lf.until, Kind: kind}))
		}
	}
	if f.Delay > 0 {
		// A delayed message lands up to the delay after the fault ended.
		for _, sp := range lf.spans {
			sp.Until = sp.Until.Add(f.Delay)
		}
	}
}

// Crash kills master i as a power loss does, and restarts it (a new
// process) after down; down <= 0 leaves it down. A non-nil then is the
// persistence it restarts with.
func (w *World) Crash(i int, down time.Duration, then *master.Persistence) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.masters[i]
	if !s.m.Up() {
		return
	}
	now := time.Now()
	lossy := !s.m.Persist.AppendOnly || s.m.Persist.Fsync != "always"
	s.m.Crash(now)
	sp := w.logLocked(Span{Client: -1, Master: i, From: now, Until: now.Add(24 * time.Hour), Kind: "crash", Lossy: lossy})
	if then != nil {
		s.m.Reconfigure(*then)
	}
	if down > 0 {
		s.downUntil = now.Add(down)
		sp.Until = s.downUntil
		w.atLocked(s.downUntil, func() { w.restart(s) })
	}
}

// Restart stops master i keeping every write (SHUTDOWN SAVE, or a kill
// with AOF always) and starts a new process after down.
func (w *World) Restart(i int, down time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.masters[i]
	if !s.m.Up() {
		return
	}
	now := time.Now()
	s.m.Shutdown(now)
	s.downUntil = now.Add(down)
	w.logLocked(Span{Client: -1, Master: i, From: now, Until: s.downUntil, Kind: "restart"})
	w.atLocked(s.downUntil, func() { w.restart(s) })
}

func (w *World) restart(s *server) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !s.m.Up() {
		s.m.Restart(time.Now())
		s.downUntil = time.Time{}
	}
}

// Up reports whether master i runs, and until when it is down.
func (w *World) Up(i int) (bool, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.masters[i]
	return s.m.Up(), s.downUntil
}

// Freeze stops master i for d (SIGSTOP): commands that reach it meanwhile
// run when it thaws.
func (w *World) Freeze(i int, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if t := now.Add(d); t.After(w.masters[i].frozenUntil) {
		w.masters[i].frozenUntil = t
	}
	w.freezeSpans = append(w.freezeSpans, w.logLocked(Span{Client: -1, Master: i, From: now, Until: now.Add(d), Kind: "freeze"}))
}

// ClockStep steps master i's clock by d.
func (w *World) ClockStep(i int, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.masters[i].m.Clock.Step(now, d)
	w.logLocked(Span{Client: -1, Master: i, From: now, Until: now, Kind: "clock-step"})
}

// ClockRate sets the rate of master i's clock.
func (w *World) ClockRate(i int, rate float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.masters[i].m.Clock.SetRate(time.Now(), rate)
}

// Failover promotes master i's replica; it reports false without one.
func (w *World) Failover(i int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	ok := w.masters[i].m.Failover(now)
	if ok {
		w.logLocked(Span{Client: -1, Master: i, From: now, Until: now, Kind: "failover", Lossy: true})
	}
	return ok
}

// SetLag changes the lag of master i's replica.
func (w *World) SetLag(i int, lag time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	w.masters[i].m.SetLag(now, lag)
	w.logLocked(Span{Client: -1, Master: i, From: now, Until: now.Add(lag + time.Second), Kind: "lag"})
}

// FreezeClient stops client c for d (a GC pause, SIGSTOP): nothing it
// sends leaves, and nothing reaches it, until it thaws. (Its timers are
// the library's and still fire: the simulation cannot stop them.)
func (w *World) FreezeClient(c int, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	if t := now.Add(d); t.After(w.clients[c].frozenUntil) {
		w.clients[c].frozenUntil = t
	}
	w.freezeSpans = append(w.freezeSpans, w.logLocked(Span{Client: c, Master: -1, From: now, Until: now.Add(d), Kind: "client-pause"}))
}

// CrashClient makes client c send nothing more, as a crashed process.
func (w *World) CrashClient(c int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.clients[c].crashed = true
}

// Crashed reports whether client c crashed.
func (w *World) Crashed(c int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clients[c].crashed
}

// Heal ends every link fault and freeze now (down masters restart at
// their time).
func (w *World) Heal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	for _, row := range w.links {
		for _, l := range row {
			for _, f := range l.faults {
				if f.until.After(now) {
					f.until = now
					for _, sp := range f.spans {
						sp.Until = now.Add(f.delay)
					}
				}
			}
		}
	}
	for _, sp := range w.freezeSpans {
		if sp.Until.After(now) {
			sp.Until = now
		}
	}
	for _, s := range w.masters {
		if s.frozenUntil.After(now) {
			s.frozenUntil = now
			// commands held by the freeze are scheduled at its old end;
			// they run then (a thaw does not reorder the queue)
		}
	}
	for _, c := range w.clients {
		if c.frozenUntil.After(now) {
			c.frozenUntil = now
		}
	}
}
