// Package workload runs a schedule's clients against a simulated world:
// each client has Lockers of the real redlock package over its Nodes, and
// runs its operations (every lock kind, renewal, Extend, Resume, Do) one
// after another, recording every grant, attempt, release, Extend,
// renewal, loss and lock context on one timeline (a chaos/checker
// History, judged by the chaos suite's own checkers). The masters are read
// directly, at exact instants: how long a quorum keeps a hold
// (until-within-expiry), what a call left behind (nothing-left), a reader
// beside a writer (no-reader-beside-writer, after every command), a fair
// waiter registered on a quorum (fair-order).
package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
	"github.com/quorumlock/quorumlock/sim/schedule"
	"github.com/quorumlock/quorumlock/sim/world"
)

// Run is one schedule's workload.
type Run struct {
	W *world.World
	S *schedule.Schedule
	H *checker.History
	// StrictLeftovers: the final leftover check does not excuse a master
	// to which a release failed (the chaos suite's rule does).
	StrictLeftovers bool

	quorum  int
	clients []*client
	start   time.Time
	stop    chan struct{} // closed by Close: watchers stop

	mu     sync.Mutex
	extra  []checker.Violation // the simulator's own invariants (invariants.go)
	fair   map[string]bool     // checker keys of fair locks
	lossy  []time.Time         // per master: when it last lost data (zero: never)
	losses []time.Time         // every data loss
	exec   execState
	// abandoned are tokens whose keys the masters may keep up to their
	// TTL by design (a failed Resume's).
	abandoned map[string]bool
	// tracked are the holds whose calls name their token in their
	// tombstone key, by token (onSend).
	tracked map[string]*held
	// Stats
	ops, grants int
}

// client is one client: its Lockers and what its operations share.
type client struct {
	r      *Run
	i      int
	base   *redlock.Locker // Config as the schedule says
	fenced *redlock.Locker // the same with Fencing
	renew  *redlock.Locker // the same with AutoRenew
	plain  *redlock.Locker // the same without fencing
	obs    *observer
	// mailbox (Resume): tokens handed to this client.
	mu       sync.Mutex
	inFair   map[string]time.Time // fair key -> the call time of the client's waiting fair call
	failures []nodeFailure
	exits    []exitingLocker // Lockers of processes that exit after their call
}

// exitingLocker is the Locker of an operation whose process exits after
// it, and how it exits.
type exitingLocker struct {
	l    *redlock.Locker
	exit func()
}

// New makes the clients' Lockers; nothing is sent until Start.
func New(w *world.World, s *schedule.Schedule, h *checker.History) (*Run, error) {
	r := &Run{W: w, S: s, H: h, quorum: len(s.Masters)/2 + 1, fair: map[string]bool{}, lossy: make([]time.Time, len(s.Masters)), abandoned: map[string]bool{}, tracked: map[string]*held{}}
	r.exec.init(r)
	r.stop = make(chan struct{})
	for i := range s.Clients {
		c := &client{r: r, i: i, inFair: map[string]time.Time{}}
		c.obs = &observer{c: c}
		cfg := r.config(i)
		cfg.Observer = c.obs
		var err error
		if c.base, err = redlock.New(w.Nodes(i), cfg); err != nil {
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		cfg.Fencing = true
		if c.fenced, err = redlock.New(w.Nodes(i), cfg); err != nil {
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		cfg.Fencing = s.Lib.Fencing
		cfg.AutoRenew = true
		if c.renew, err = redlock.New(w.Nodes(i), cfg); err != nil {
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		cfg.Fencing, cfg.AutoRenew = false, false
		if c.plain, err = redlock.New(w.Nodes(i), cfg); err != nil {
			return nil, fmt.Errorf("workload: client %d: %w", i, err)
		}
		r.clients = append(r.clients, c)
	}
	w.OnExec = r.exec.onExec
	w.BeforeExec = r.exec.beforeExec
	w.OnSend = r.onSend
	r.probeNew()
	return r, nil
}

// noIdentity is a Node that cannot tell its master's process.
type noIdentity struct{ *world.Node }

func (n noIdentity) Abilities() redlock.Abilities {
	a := n.Node.Abilities()
	a.Identity = nil
	return a
}

// probeNew checks that New refuses, with ErrInvalid, Nodes that cannot
// tell their master's process when the restart guard is on (it needs
// them): a guard silently absent is a misconfiguration accepted.
func (r *Run) probeNew() {
	cfg := r.config(0)
	if cfg.RestartGuard < 0 {
		return
	}
	var nodes []redlock.Node
	for _, n := range r.W.Nodes(0) {
		nodes = append(nodes, noIdentity{n.(*world.Node)})
	}
	l, err := redlock.New(nodes, cfg)
	if err == nil {
		l.Close(context.Background())
		r.violate(checker.Violation{Invariant: MisconfigurationAccepted, Key: "*", Detail: "New accepted Nodes without Abilities.Identity while the restart guard is on"})
	} else if !errors.Is(err, redlock.ErrInvalid) {
		r.violate(checker.Violation{Invariant: MisconfigurationAccepted, Key: "*", Detail: "New refused Nodes without Abilities.Identity with an error that is not ErrInvalid: " + err.Error()})
	}
}

// config is the redlock.Config the schedule gives client c.
func (r *Run) config(c int) redlock.Config {
	s := r.S
	cfg := redlock.Config{
		NodeTimeout:          s.Lib.NodeTimeout.D(),
		DisableWakeOnRelease: s.Lib.NoWake,
		KeyPrefix:            s.Lib.Prefix,
		Fencing:              s.Lib.Fencing,
	}
	if c >= s.Lib.Undurable {
		cfg.Durability = redlock.Durability{Local: s.Lib.Local, Replicas: s.Lib.Replicas}
	}
	switch s.Lib.Guard {
	case "strict":
		cfg.RestartGuard = s.Lib.Strict.D()
	case "off":
		cfg.RestartGuard = -1
	}
	return cfg
}

// Start runs every client's operations and returns when all of them
// returned (their holds released, their contexts ended).
func (r *Run) Start(ctx context.Context) {
	r.start = r.W.Start()
	var wg sync.WaitGroup
	for _, c := range r.clients {
		wg.Go(func() { c.run(ctx) })
	}
	wg.Wait()
}

// Close closes every Locker, waiting for their releases in flight (bounded
// by ctx).
func (r *Run) Close(ctx context.Context) {
	close(r.stop)
	for _, c := range r.clients {
		c.base.Close(ctx)
		c.fenced.Close(ctx)
		c.renew.Close(ctx)
		c.plain.Close(ctx)
	}
}

// Extra returns the violations of the simulator's own invariants.
func (r *Run) Extra() []checker.Violation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]checker.Violation(nil), r.extra...)
}

// Counts returns the operations run and the locks granted.
func (r *Run) Counts() (ops, grants int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ops, r.grants
}

// IsFair reports whether the checker key name is a fair lock's.
func (r *Run) IsFair(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fair[name]
}

// violate records a violation of one of the simulator's own invariants.
func (r *Run) violate(v checker.Violation) {
	r.mu.Lock()
	r.extra = append(r.extra, v)
	r.mu.Unlock()
}

// track notes h as the hold of token, for onSend.
func (r *Run) track(token string, h *held) {
	r.mu.Lock()
	r.tracked[token] = h
	r.mu.Unlock()
}

// onSend is told of every script call a client sends: for a call of a
// tracked hold (an Extend, a renewal), its Until as the library left it
// before sending.
func (r *Run) onSend(client int, keys []string) {
	if len(keys) == 0 {
		return
	}
	_, id, ok := strings.Cut(keys[0], layout.TombInfix)
	if !ok {
		return
	}
	r.mu.Lock()
	h := r.tracked[id]
	r.mu.Unlock()
	if h != nil {
		h.noteUntil()
	}
}

// abandon notes that token's keys may stay up to their TTL by design.
func (r *Run) abandon(token string) {
	r.mu.Lock()
	r.abandoned[token] = true
	r.mu.Unlock()
}

// NoteLoss records that master i lost data at t (a power loss without
// every write on disk, or a failover): what it held before may be gone.
func (r *Run) NoteLoss(i int, t time.Time) {
	r.mu.Lock()
	r.lossy[i] = t
	r.losses = append(r.losses, t)
	r.mu.Unlock()
}

// LossBetween reports whether a master lost data in [from, to].
func (r *Run) LossBetween(from, to time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.losses {
		if !t.Before(from) && !t.After(to) {
			return true
		}
	}
	return false
}

// lostSince reports whether master i lost data after t.
func (r *Run) lostSince(i int, t time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.lossy[i].IsZero() && r.lossy[i].After(t)
}

// LostAny reports whether any master lost data.
func (r *Run) LostAny() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range r.lossy {
		if !t.IsZero() {
			return true
		}
	}
	return false
}

// keyName is the checker's (and the Locker's) name of key index k of kind
// k for client c: shared keys by index, private ones by client.
func keyName(kind schedule.Kind, k, c int) string {
	base := string(kind)
	switch kind {
	case schedule.Read, schedule.Write:
		base = "rw"
	}
	if k < 0 {
		return fmt.Sprintf("%s.c%d", base, c)
	}
	return fmt.Sprintf("%s%d", base, k)
}

// multiKey names key index k of the multi-key kind for client c.
func multiKey(k, c int, private bool) string {
	if private {
		return fmt.Sprintf("multi.c%d.%d", c, k)
	}
	return fmt.Sprintf("multi%d", k)
}
