package fault

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what a fault does.
type Kind string

// The kinds of fault. Kill, Pause, Cut, Slow, Restart and ClockJump inject a
// fault; Start, Resume and Heal end one.
const (
	Kill      Kind = "kill"       // SIGKILL the node (docker kill)
	Start     Kind = "start"      // start a killed node
	Restart   Kind = "restart"    // kill, wait Arg, start
	Pause     Kind = "pause"      // SIGSTOP the node (docker pause)
	Resume    Kind = "resume"     // SIGCONT the node (docker unpause)
	Slow      Kind = "slow"       // delay the node's replies to Clients by Arg
	Cut       Kind = "cut"        // drop all traffic between the node and Clients
	Heal      Kind = "heal"       // end Slow or Cut between the node and Clients
	ClockJump Kind = "clock-jump" // the node's clock jumps by Arg (emulated)
	// ClientPause is a client frozen for Arg (a GC pause, a stopped VM).
	// The scenario freezes the client itself and records it with
	// Injector.Record; Node is -1 and Clients names the client.
	ClientPause Kind = "client-pause"
)

// Injects reports whether k injects a fault (rather than ending one).
func (k Kind) Injects() bool {
	switch k {
	case Kill, Restart, Pause, Slow, Cut, ClockJump, ClientPause:
		return true
	}
	return false
}

// Fault is one step of a schedule.
type Fault struct {
	// At is the offset from the start of the schedule.
	At   time.Duration `json:"at_ns"`
	Kind Kind          `json:"kind"`
	// Node is the index of the node.
	Node int `json:"node"`
	// Clients are the clients whose links Slow, Cut and Heal act on; nil
	// means every client.
	Clients []int `json:"clients,omitempty"`
	// Arg is the latency of Slow, the delay of Restart, the jump of
	// ClockJump.
	Arg time.Duration `json:"arg_ns,omitempty"`
}

// String describes the fault, e.g. "cut redis-3 from clients 0,2".
func (f Fault) String() string {
	node := fmt.Sprintf("redis-%d", f.Node)
	clients := "all clients"
	if f.Clients != nil {
		ids := make([]string, len(f.Clients))
		for i, c := range f.Clients {
			ids[i] = fmt.Sprint(c)
		}
		clients = "clients " + strings.Join(ids, ",")
		if len(f.Clients) == 1 {
			clients = "client " + ids[0]
		}
	}
	switch f.Kind {
	case ClientPause:
		return fmt.Sprintf("pause %s for %v", clients, f.Arg)
	case Restart:
		if f.Arg > 0 {
			return fmt.Sprintf("restart %s after %v", node, f.Arg)
		}
		return "restart " + node
	case Slow:
		return fmt.Sprintf("slow %s by %v for %s", node, f.Arg, clients)
	case Cut:
		return fmt.Sprintf("cut %s from %s", node, clients)
	case Heal:
		return fmt.Sprintf("heal %s for %s", node, clients)
	case ClockJump:
		sign := "+"
		if f.Arg < 0 {
			sign = ""
		}
		return fmt.Sprintf("clock-jump %s by %s%v", node, sign, f.Arg)
	default:
		return string(f.Kind) + " " + node
	}
}

// Schedule is a list of faults ordered by At.
type Schedule []Fault

// Injections counts the faults of s that inject a fault.
func (s Schedule) Injections() int {
	n := 0
	for _, f := range s {
		if f.Kind.Injects() {
			n++
		}
	}
	return n
}

// sort orders s by At, keeping the order of faults at the same offset.
func (s Schedule) sort() {
	slices.SortStableFunc(s, func(a, b Fault) int {
		switch {
		case a.At < b.At:
			return -1
		case a.At > b.At:
			return 1
		}
		return 0
	})
}
