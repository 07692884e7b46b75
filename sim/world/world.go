// Package world is the simulated network and masters that the library
// runs against in the simulator: N masters (package master) and, for each
// client, a link to each master through which its redlock.Node (node.go)
// sends its commands. Every command and reply crosses its link with a
// delay drawn from the seed, and may meet the faults of the moment: a
// delay, a drop, a reply lost after the command ran, a partition that
// holds or drops what it cuts, a master that is down, frozen, restarted,
// failed over or whose clock steps, a client that is frozen or crashed.
// It runs inside a testing/synctest bubble: the event loop (loop.go) sleeps
// on the bubble's clock, so a simulated hour costs what its events cost.
package world

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/sim/master"
)

// Config describes a World.
type Config struct {
	// Masters are the masters' settings, one per master.
	Masters []MasterConfig
	// Clients is the number of clients (each gets a link to every master).
	Clients int
	// Delay is the one-way delay of a link, drawn uniformly from
	// [Delay.Min, Delay.Max] for every message.
	Delay Range
	// FIFO keeps the messages of a link in order in each direction (one
	// connection); without it they may overtake each other (several
	// connections, a reconnect).
	FIFO bool
	// Stall is how long a Node waits for a reply before it fails the call
	// (pool.Config.StallTimeout); 0 means 1s.
	Stall time.Duration
	// Seed draws the network's randomness (delays, drops).
	Seed uint64
	// Rewrite, if set, rewrites every script before a master runs it: a
	// test's way to put a defect into a script without a copy of the
	// tree.
	Rewrite func(src string) string
}

// MasterConfig is one master's settings.
type MasterConfig struct {
	Persist master.Persistence
	// ClockOffset and ClockRate: the master's clock reads the time plus
	// the offset and runs at the rate (1 is true time).
	ClockOffset time.Duration
	ClockRate   float64
	// ReplicaLag < 0: no replica; else the replica receives every write
	// that long after it ran.
	ReplicaLag time.Duration
	// FsyncPhase is when, within each second, an everysec master fsyncs.
	FsyncPhase time.Duration
	// NoInfo: the master refuses INFO (an ACL): Nodes cannot tell its
	// process.
	NoInfo bool
}

// Range is a range of durations.
type Range struct{ Min, Max time.Duration }

func (r Range) draw(rng *rand.Rand) time.Duration {
	if r.Max <= r.Min {
		return r.Min
	}
	return r.Min + time.Duration(rng.Int64N(int64(r.Max-r.Min)+1))
}

// World is the simulated masters and network.
type World struct {
	mu      sync.Mutex
	cfg     Config
	start   time.Time
	events  events
	seq     uint64
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	stopped bool
	ran     int
	rng     *rand.Rand

	masters []*server
	links   [][]*link // [client][master]
	clients []*client

	// OnSend, if set, is told of every script call a client's Node sends,
	// on the sending goroutine, before it leaves (without the World's
	// lock): by then the library has done what it does before it sends.
	OnSend func(client int, keys []string)
	// OnExec, if set, is told of every command a master ran, with the
	// World's lock held (a check may read the masters; it must not call
	// the World).
	OnExec func(Exec)
	// BeforeExec, if set, is told of every command a master is about to
	// run (Reply unset), as OnExec is of it once it ran.
	BeforeExec  func(Exec)
	spans       []*Span // the fault log
	freezeSpans []*Span // the log's freezes, which Heal ends
	// stats
	sent, dropped, lateExec int
}

// server is a master and what the network knows of it.
type server struct {
	m           *master.Master
	i           int
	frozenUntil time.Time // SIGSTOP: commands arriving before then run then
	downUntil   time.Time // crashed until restarted (zero: up, or down for good)
	subs        map[string][]*sub
	fsyncPhase  time.Duration
	noInfo      bool // refuses INFO
}

// client is what the network knows of one client.
type client struct {
	frozenUntil time.Time
	crashed     bool
}

// Exec describes one command a master ran.
type Exec struct {
	At     time.Time
	Client int
	Master int
	// Src is the script's source ("" for a command); Keys and Args its
	// KEYS and ARGV (for a command, Args is the command).
	Src        string
	Keys, Args []string
	Reply      any
	// Late: its caller had given up on it (the call completed, by a
	// timeout or a stall) before it ran.
	Late bool
}

// New returns a World that starts at now. Call Run to start its loop and
// Stop to end it.
func New(cfg Config, now time.Time) *World {
	if cfg.Stall <= 0 {
		cfg.Stall = time.Second
	}
	w := &World{
		cfg:   cfg,
		start: now,
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
		rng:   rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
	}
	for i, mc := range cfg.Masters {
		lag := mc.ReplicaLag
		m := master.New(fmt.Sprintf("m%d", i), now, mc.Persist, master.NewClock(now, mc.ClockOffset, mc.ClockRate), lag)
		w.masters = append(w.masters, &server{m: m, i: i, subs: map[string][]*sub{}, fsyncPhase: mc.FsyncPhase, noInfo: mc.NoInfo})
	}
	for c := range cfg.Clients {
		w.clients = append(w.clients, &client{})
		row := make([]*link, len(cfg.Masters))
		for i := range row {
			row[i] = &link{client: c, master: i}
		}
		w.links = append(w.links, row)
	}
	return w
}

// Run starts the event loop and the masters' fsyncs. Call it inside the
// bubble.
func (w *World) Run() {
	for _, s := range w.masters {
		// Every master ticks: one restarted with everysec fsyncs too.
		w.scheduleFsync(s, w.start.Add(s.fsyncPhase))
	}
	go w.loop()
}

func (w *World) scheduleFsync(s *server, t time.Time) {
	w.At(t, func() {
		w.mu.Lock()
		s.m.Fsync(t)
		stopped := w.stopped
		w.mu.Unlock()
		if !stopped {
			w.scheduleFsync(s, t.Add(time.Second))
		}
	})
}

// Stop ends the event loop: nothing more is delivered. Every call still
// pending is completed with ErrStopped, so that no goroutine of the
// library waits for it.
func (w *World) Stop() {
	w.mu.Lock()
	if w.stopped {
		w.mu.Unlock()
		return
	}
	w.stopped = true
	close(w.stop)
	w.mu.Unlock()
	<-w.done
	w.mu.Lock()
	var pending []*call
	for _, row := range w.links {
		for _, l := range row {
			for c := range l.pending {
				pending = append(pending, c)
			}
			l.pending = nil
		}
	}
	w.mu.Unlock()
	for _, c := range pending {
		c.complete(nil, ErrStopped)
	}
}

// ErrStopped completes the calls pending when the World stopped.
var ErrStopped = errors.New("sim: the world stopped")

// Now is the simulation's time.
func (w *World) Now() time.Time { return time.Now() }

// Start is when the World started.
func (w *World) Start() time.Time { return w.start }

// Masters is the number of masters.
func (w *World) Masters() int { return len(w.masters) }

// Master returns master i (read it under Inspect).
func (w *World) Master(i int) *master.Master { return w.masters[i].m }

// Inspect runs f with the World's lock held, so that it may read the
// masters consistently at the current time.
func (w *World) Inspect(f func(now time.Time)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	f(time.Now())
}

// Stats returns counts of the run: events run, messages sent and dropped,
// commands that ran after their caller gave up.
func (w *World) Stats() (events, sent, dropped, late int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ran, w.sent, w.dropped, w.lateExec
}

// Idle reports whether no call of client c is in flight to any master:
// everything it sent has run or was lost, and every reply has come back
// or was lost.
func (w *World) Idle(c int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range w.links[c] {
		if l.inflight > 0 {
			return false
		}
	}
	return true
}
