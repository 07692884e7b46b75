package fault

import (
	"math/rand/v2"
	"time"
)

// RandomConfig shapes a random schedule.
type RandomConfig struct {
	// Nodes and Clients are the sizes of the cluster and of the workload.
	Nodes, Clients int
	// Duration is the length of the schedule: every fault injected ends
	// before it.
	Duration time.Duration
	// MaxFaulty bounds how many nodes are under a fault at once; 0 means a
	// minority, (Nodes-1)/2.
	MaxFaulty int
	// Gap is the mean time between two injections (uniform in [Gap/2,
	// 3Gap/2]); 0 means 200ms.
	Gap time.Duration
	// Hold is the mean length of a fault (uniform in [Hold/2, 3Hold/2]); 0
	// means 500ms.
	Hold time.Duration
	// Kinds are the faults to inject, drawn uniformly: any of Kill, Pause,
	// Cut, Slow, Restart, RestartKept, ScriptFlush, ClockJump, and the
	// connection faults DropReply, Reset, SlowSetup, Multi (which needs
	// Injector.SendCommand), DelayRequests and DelayReplies. Empty means
	// Kill, Pause, Cut and Slow.
	Kinds []Kind
	// DownFor is the least time a killed node stays down, and the delay of
	// a Restart. Nodes without persistence need at least the longest TTL
	// for the run to be safe.
	DownFor time.Duration
	// Rejoin is how long a node that restarted (Kill, Restart,
	// RestartKept) still counts as faulty once it is back: the clients'
	// restart guard does not count its grants for that long (the longest
	// TTL they use, and the second by which a master's uptime is rounded).
	// Without it, restarts in a row leave a majority unable to grant
	// while the schedule counts only a minority faulty.
	Rejoin time.Duration
	// Latency is the delay of Slow; 0 means 30ms.
	Latency time.Duration
	// RTT is the round-trip time of SlowSetup; 0 means 40ms.
	RTT time.Duration
	// Jump is the clock jump of ClockJump.
	Jump time.Duration
	// Delay is the mean delay of DelayRequests and DelayReplies (each
	// uniform in [Delay/2, 3Delay/2]); 0 means DefaultDelay.
	Delay time.Duration
}

// DefaultDelay is the mean delay of DelayRequests and DelayReplies: past
// the node timeout of any client (a caller gives up first), and most of
// the time past the pipelined connection's stall timeout (1s: the client
// closes the connection and reaches the node over a new one before the
// bytes arrive).
const DefaultDelay = 1500 * time.Millisecond

// Random returns the schedule that seed draws for cfg. The same seed and
// config always give the same schedule. Each injection takes a healthy node
// (at most MaxFaulty nodes are faulty at once) and schedules the end of its
// fault: Start after Kill, Resume after Pause, Heal after Cut, Slow,
// SlowSetup, DropReply, Multi, DelayRequests and DelayReplies. Restart,
// RestartKept, ScriptFlush, ClockJump and Reset need no end; the node
// counts as faulty for the restart's delay, the hold, and a quarter of the
// hold (the clients' redial) respectively, and a restarted node for Rejoin
// more. A delay's node counts as faulty until its last delayed bytes have
// arrived (its Heal plus its delay), which may be after Duration: the
// schedule ends every fault before Duration, not the bytes still on their
// way. Connection faults act on all
// clients half of the time, on a random subset otherwise.
func Random(seed uint64, cfg RandomConfig) Schedule {
	rng := rand.New(rand.NewPCG(seed, 0x5ca1ab1e))
	if cfg.MaxFaulty <= 0 {
		cfg.MaxFaulty = (cfg.Nodes - 1) / 2
	}
	if cfg.Gap <= 0 {
		cfg.Gap = 200 * time.Millisecond
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 500 * time.Millisecond
	}
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = []Kind{Kill, Pause, Cut, Slow}
	}
	if cfg.Latency <= 0 {
		cfg.Latency = 30 * time.Millisecond
	}
	if cfg.RTT <= 0 {
		cfg.RTT = 40 * time.Millisecond
	}
	if cfg.Delay <= 0 {
		cfg.Delay = DefaultDelay
	}
	around := func(mean time.Duration) time.Duration {
		return mean/2 + time.Duration(rng.Int64N(int64(mean)+1))
	}
	busyUntil := make([]time.Duration, cfg.Nodes) // a node is faulty before this
	var s Schedule
	for t := around(cfg.Gap); t < cfg.Duration; t += around(cfg.Gap) {
		var healthy []int
		faulty := 0
		for i, b := range busyUntil {
			if b > t {
				faulty++
			} else {
				healthy = append(healthy, i)
			}
		}
		if faulty >= cfg.MaxFaulty || len(healthy) == 0 {
			continue
		}
		node := healthy[rng.IntN(len(healthy))]
		kind := cfg.Kinds[rng.IntN(len(cfg.Kinds))]
		hold := around(cfg.Hold)
		var end Fault
		var clients []int        // of a fault without an end
		late := time.Duration(0) // how long its bytes still arrive after its end
		switch kind {
		case Kill:
			end = Fault{Kind: Start, Node: node}
			hold = max(hold, cfg.DownFor)
		case Pause:
			end = Fault{Kind: Resume, Node: node}
		case Cut, Slow, SlowSetup, DropReply, Multi:
			end = Fault{Kind: Heal, Node: node, Clients: someClients(rng, cfg.Clients)}
		case DelayRequests, DelayReplies:
			end = Fault{Kind: Heal, Node: node, Clients: someClients(rng, cfg.Clients)}
			late = around(cfg.Delay)
		case Restart:
			hold = cfg.DownFor + hold/4 // the delay, and time to come back
		case RestartKept, ScriptFlush:
			hold /= 4 // instant (a restart: quick), then the clients' time to dial anew or reload
		case Reset:
			clients = someClients(rng, cfg.Clients)
			hold /= 4 // instant, then the clients' time to dial anew
		}
		if t+hold >= cfg.Duration {
			continue
		}
		f := Fault{At: t, Kind: kind, Node: node, Clients: end.Clients}
		if end.Kind == "" {
			f.Clients = clients
		}
		switch kind {
		case Slow:
			f.Arg = cfg.Latency
		case SlowSetup:
			f.Arg = cfg.RTT
		case Restart:
			f.Arg = cfg.DownFor
		case ClockJump:
			f.Arg = cfg.Jump
		case DelayRequests, DelayReplies:
			f.Arg = late
		}
		s = append(s, f)
		if end.Kind != "" {
			end.At = t + hold
			s = append(s, end)
		}
		if kind == Kill || kind == Restart || kind == RestartKept {
			hold += cfg.Rejoin
		}
		busyUntil[node] = t + hold + late
	}
	s.sort()
	return s
}

// someClients picks the clients a link fault affects: all of them (nil)
// half of the time, otherwise a random non-empty subset.
func someClients(rng *rand.Rand, n int) []int {
	if n <= 1 || rng.IntN(2) == 0 {
		return nil
	}
	var c []int
	for len(c) == 0 {
		for i := range n {
			if rng.IntN(2) == 0 {
				c = append(c, i)
			}
		}
	}
	if len(c) == n {
		return nil
	}
	return c
}
