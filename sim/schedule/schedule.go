// Package schedule is what one simulated run does, as data: the masters
// and their persistence, the library's configuration, the clients'
// operations (every lock kind, with holds, Extends, renewals, hand-overs
// and contexts that end at any point) and the faults, each at its time. A
// Schedule is drawn from a seed (Generate), printed and read back as JSON,
// and shrunk (Shrink) by dropping and shortening what it does while it
// still fails.
package schedule

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Schedule is one run of the simulator.
type Schedule struct {
	Seed uint64 `json:"seed"`
	// Unsafe: faults outside the library's stated assumptions may occur
	// (a majority losing data, clock steps, failover to a replica that did
	// not acknowledge, the guard off on lossy masters): a violation is then
	// the expected demonstration, not a bug.
	Unsafe bool `json:"unsafe,omitempty"`
	// Theme: "plain" (faults anywhere) or "split" (each client reaches a
	// quorum of its own, for the whole run, and the masters clients share
	// fail).
	Theme   string   `json:"theme,omitempty"`
	Masters []Master `json:"masters"`
	Clients int      `json:"clients"`
	Lib     Lib      `json:"lib"`
	Net     Net      `json:"net"`
	Faults  []Fault  `json:"faults,omitempty"`
	Ops     [][]Op   `json:"ops"`
	Horizon Duration `json:"horizon"`
	// Warmup, when not 0: every Locker of a client first records this TTL,
	// the schedule's longest, with the restart guard (a TryLock of a key
	// of the warm-up's: the guard records a TTL whether or not the lock
	// is granted), as the chaos suite's restart-guarded scenario's warm-up
	// lock does.
	Warmup Duration `json:"warmup,omitempty"`
	// WarmupExtend, when not 0: the warm-up lock is then extended to this
	// TTL (longer than Warmup, and the longest any Extend of the schedule
	// uses), so that the guard learns it from an Extend, as the chaos
	// suite's restart-guarded scenario's clients do.
	WarmupExtend Duration     `json:"warmup_extend,omitempty"`
	Keys         map[Kind]int `json:"keys"` // shared keys per kind
}

// Master is one master's settings.
type Master struct {
	// Persist: "none", "everysec" or "always" (AOF).
	Persist     string   `json:"persist"`
	ClockOffset Duration `json:"clock_offset,omitempty"`
	ClockRate   float64  `json:"clock_rate,omitempty"` // 0 means 1
	// ReplicaLag < 0: no replica.
	ReplicaLag Duration `json:"replica_lag"`
	FsyncPhase Duration `json:"fsync_phase,omitempty"`
	// NoInfo: the master refuses INFO to the clients' user (an ACL): their
	// Nodes cannot tell its process.
	NoInfo bool `json:"no_info,omitempty"`
}

// Lib is the library's configuration, the same for every client.
type Lib struct {
	// Guard: "default", "strict" (RestartGuard = Strict) or "off".
	Guard string `json:"guard"`
	// Delayed: with the guard off, a master that restarts losing data is
	// kept down for the longest TTL (the operational rule the guard
	// replaces).
	Delayed  bool     `json:"delayed,omitempty"`
	Strict   Duration `json:"strict,omitempty"`
	Local    bool     `json:"durable_local,omitempty"`
	Replicas int      `json:"durable_replicas,omitempty"`
	// Undurable: the first Undurable clients lock without the
	// durability the others ask for (Local, Replicas): clients of one
	// deployment configured apart, whose grants a restart may lose
	// while the others' it may not.
	Undurable   int      `json:"undurable,omitempty"`
	NodeTimeout Duration `json:"node_timeout,omitempty"` // 0: the default
	NoWake      bool     `json:"no_wake,omitempty"`
	// Fencing: the kinds other than Fenced (always fenced) lock with
	// Config.Fencing too.
	Fencing bool   `json:"fencing,omitempty"`
	Prefix  string `json:"prefix,omitempty"`
}

// Net is the network's settings.
type Net struct {
	DelayMin Duration `json:"delay_min"`
	DelayMax Duration `json:"delay_max"`
	FIFO     bool     `json:"fifo,omitempty"`
	Stall    Duration `json:"stall,omitempty"`
}

// Kind is a kind of operation.
type Kind string

// The operations.
const (
	Plain     Kind = "plain"     // Lock or TryLock, held, maybe extended, unlocked
	Fenced    Kind = "fenced"    // the same with Config.Fencing
	Reentrant Kind = "reentrant" // an owner's nested holds
	Read      Kind = "read"      // RWMutex.RLock
	Write     Kind = "write"     // RWMutex.Lock
	Fair      Kind = "fair"      // Fair.Lock
	Semaphore Kind = "semaphore" // Semaphore.Acquire
	Multi     Kind = "multi"     // LockMulti
	Renew     Kind = "renew"     // an AutoRenew lock
	Do        Kind = "do"        // Locker.Do
	Resume    Kind = "resume"    // a plain lock handed over to another client, who Resumes it
)

// Kinds lists the operations.
var Kinds = []Kind{Plain, Fenced, Reentrant, Read, Write, Fair, Semaphore, Multi, Renew, Do, Resume}

// Op is one operation of a client.
type Op struct {
	// At: the operation starts no earlier (from the run's start); a client
	// runs its operations one after another.
	At   Duration `json:"at"`
	Kind Kind     `json:"kind"`
	// Key is the shared key's index, or -1 for the client's private key of
	// the kind; Keys (Multi) the indices of a set.
	Key  int      `json:"key"`
	Keys []int    `json:"keys,omitempty"`
	TTL  Duration `json:"ttl"`
	// Try: TryLock instead of Lock. Wait: Lock's context ends after it
	// (0: a generous bound).
	Try  bool     `json:"try,omitempty"`
	Wait Duration `json:"wait,omitempty"`
	// Hold is how long the holder holds before it unlocks.
	Hold Duration `json:"hold"`
	// Extends are made while holding.
	Extends []Extend `json:"extends,omitempty"`
	// EndedUnlock: Unlock with a context that has already ended.
	EndedUnlock bool `json:"ended_unlock,omitempty"`
	// Watch: the holder works with Lock.Context and notes when it ends.
	Watch bool `json:"watch,omitempty"`
	// Nested (Reentrant): the owner's inner holds, each taken and released
	// within the outer hold.
	Nested []Nested `json:"nested,omitempty"`
	// Owner (Reentrant): the owner's id; operations that share it are one
	// owner's (a retried job).
	Owner int `json:"owner,omitempty"`
	// Stall (Reentrant): the outer hold's holder stalls until its hold
	// expired, and Unlocks late, after Retry took the same owner afresh.
	Stall bool `json:"stall,omitempty"`
	// To (Resume): the client that takes the lock over; Stale: the giver
	// unlocks first, and the taker's Resume must fail; Late: the giver
	// Unlocks and Extends its stale Lock after the taker took over.
	To    int  `json:"to,omitempty"`
	Stale bool `json:"stale,omitempty"`
	Late  bool `json:"late,omitempty"`
	// Fenced (Resume): the hand-over is of a fenced lock.
	Fenced bool `json:"fenced,omitempty"`
	// Permits (Semaphore).
	Permits int `json:"permits,omitempty"`
	// Crash (Fair): the waiter's client crashes while it waits.
	Crash bool `json:"crash,omitempty"`
	// Exit: a Locker of the operation's own is closed right after its
	// Unlock, and its process exits (its Nodes send nothing more).
	Exit bool `json:"exit,omitempty"`
	// Record: the acquisition keeps a holder record (WithMetadata): an
	// exclusive kind's, or a semaphore permit's.
	Record bool `json:"record,omitempty"`
	// Contend (Read, on the client's private key): while the read hold
	// is held, the same client waits for the write side (RWMutex.Lock),
	// holds it briefly and unlocks it: a writer that finds a reader, whose
	// waiting mark and release the leftover check then judges.
	Contend bool `json:"contend,omitempty"`
}

// Extend is one Extend of a hold.
type Extend struct {
	After Duration `json:"after"` // from the grant
	TTL   Duration `json:"ttl"`
	// Along: runs at the same time as the one before (two in flight).
	Along bool `json:"along,omitempty"`
	// Ended: with a context that has already ended.
	Ended bool `json:"ended,omitempty"`
}

// Nested is one inner hold of a reentrant owner.
type Nested struct {
	After Duration `json:"after"`
	TTL   Duration `json:"ttl"`
	Hold  Duration `json:"hold"`
	// Extend, when not 0, extends the inner hold by it.
	Extend Duration `json:"extend,omitempty"`
}

// FaultKind is a kind of fault.
type FaultKind string

// The faults.
const (
	Delay       FaultKind = "delay"        // links slowed, one direction or both
	Drop        FaultKind = "drop"         // messages lost with a probability
	LoseReply   FaultKind = "lose-reply"   // replies lost after the command ran
	Cut         FaultKind = "cut"          // partition: links hold (or drop) everything
	Crash       FaultKind = "crash"        // a master loses power: what was not on disk is lost
	Restart     FaultKind = "restart"      // a master restarts keeping its data (new run id)
	Freeze      FaultKind = "freeze"       // a master stops (SIGSTOP) and resumes
	ClockStep   FaultKind = "clock-step"   // a master's clock steps
	ClockRate   FaultKind = "clock-rate"   // a master's clock runs fast or slow
	Failover    FaultKind = "failover"     // a master fails over to its replica
	Lag         FaultKind = "lag"          // a master's replica lags
	ClientPause FaultKind = "client-pause" // a client freezes (GC, SIGSTOP)
)

// FaultKinds lists the faults.
var FaultKinds = []FaultKind{Delay, Drop, LoseReply, Cut, Crash, Restart, Freeze, ClockStep, ClockRate, Failover, Lag, ClientPause}

// Fault is one fault.
type Fault struct {
	At      Duration  `json:"at"`
	Kind    FaultKind `json:"kind"`
	Masters []int     `json:"masters,omitempty"`
	Clients []int     `json:"clients,omitempty"`
	For     Duration  `json:"for,omitempty"`
	// Dir: "req", "rep" or "both" (Delay, Drop).
	Dir   string   `json:"dir,omitempty"`
	Delay Duration `json:"delay,omitempty"`
	// Prob: Drop and LoseReply's probability; a Cut with Prob 1 drops.
	Prob  float64 `json:"prob,omitempty"`
	Reset bool    `json:"reset,omitempty"`
	// Step (ClockStep), Rate (ClockRate), Lag (Lag).
	Step Duration `json:"step,omitempty"`
	Rate float64  `json:"rate,omitempty"`
	Lag  Duration `json:"lag,omitempty"`
	// Persist (Crash): the restarted master runs with this persistence
	// ("always", "everysec", "none"), "" for the one it had.
	Persist string `json:"persist,omitempty"`
}

// String is a one-line account of the fault.
func (f Fault) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s", f.At, f.Kind)
	if len(f.Masters) > 0 {
		fmt.Fprintf(&b, " masters=%v", f.Masters)
	}
	if len(f.Clients) > 0 {
		fmt.Fprintf(&b, " clients=%v", f.Clients)
	}
	if f.For > 0 {
		fmt.Fprintf(&b, " for=%v", f.For)
	}
	if f.Dir != "" {
		fmt.Fprintf(&b, " dir=%s", f.Dir)
	}
	if f.Delay > 0 {
		fmt.Fprintf(&b, " delay=%v", f.Delay)
	}
	if f.Prob > 0 {
		fmt.Fprintf(&b, " prob=%.2f", f.Prob)
	}
	if f.Reset {
		b.WriteString(" reset")
	}
	if f.Step != 0 {
		fmt.Fprintf(&b, " step=%v", f.Step)
	}
	if f.Rate != 0 {
		fmt.Fprintf(&b, " rate=%.4f", f.Rate)
	}
	if f.Lag != 0 {
		fmt.Fprintf(&b, " lag=%v", f.Lag)
	}
	if f.Persist != "" {
		fmt.Fprintf(&b, " then=%s", f.Persist)
	}
	return b.String()
}

// String is a one-line account of the operation.
func (o Op) String() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// Size is the number of faults and operations: what Shrink makes smaller.
func (s *Schedule) Size() int {
	n := len(s.Faults)
	for _, ops := range s.Ops {
		n += len(ops)
	}
	return n
}

// Clone returns a deep copy of s.
func (s *Schedule) Clone() *Schedule {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	var c Schedule
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	return &c
}

// JSON returns s as indented JSON.
func (s *Schedule) JSON() []byte {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// Parse reads a schedule written by JSON.
func Parse(b []byte) (*Schedule, error) {
	var s Schedule
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("schedule: %w", err)
	}
	return &s, nil
}

// Describe is a multi-line account of s for reports.
func (s *Schedule) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, theme %s, %d masters, %d clients, horizon %v, unsafe=%v\n", s.Seed, s.Theme, len(s.Masters), s.Clients, s.Horizon, s.Unsafe)
	for i, m := range s.Masters {
		fmt.Fprintf(&b, "  master %d: persist=%s clock offset=%v rate=%v replica lag=%v no-info=%v\n", i, m.Persist, m.ClockOffset, m.ClockRate, m.ReplicaLag, m.NoInfo)
	}
	fmt.Fprintf(&b, "  lib: %+v\n  net: %+v\n", s.Lib, s.Net)
	for _, f := range s.Faults {
		fmt.Fprintf(&b, "  fault %s\n", f)
	}
	for c, ops := range s.Ops {
		for _, o := range ops {
			fmt.Fprintf(&b, "  client %d: %s\n", c, o)
		}
	}
	return b.String()
}

// Duration is a time.Duration that reads and writes itself in JSON as
// "1.5s".
type Duration time.Duration

// D is d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a string or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		*d = Duration(v)
		return err
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*d = Duration(n)
	return nil
}
