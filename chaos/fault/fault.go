package fault

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Kind is what a fault does.
type Kind string

// The kinds of fault. Kill, Pause, Cut, Slow, SlowSetup, DropReply, Reset,
// Multi, DelayRequests, DelayReplies, ScriptFlush, Restart, RestartKept and
// ClockJump inject a fault; Start, Resume and Heal end one.
const (
	Kill      Kind = "kill"       // SIGKILL the node (docker kill)
	Start     Kind = "start"      // start a killed node
	Restart   Kind = "restart"    // kill, wait Arg, start
	Pause     Kind = "pause"      // SIGSTOP the node (docker pause)
	Resume    Kind = "resume"     // SIGCONT the node (docker unpause)
	Slow      Kind = "slow"       // delay the requests of Clients to the node by Arg
	Cut       Kind = "cut"        // hold all traffic between the node and Clients
	Heal      Kind = "heal"       // end Slow, SlowSetup, Cut, DropReply, Multi or a Delay between the node and Clients
	ClockJump Kind = "clock-jump" // the node's clock jumps by Arg (emulated)
	// ClientPause is a client frozen for Arg (a GC pause, a stopped VM).
	// The scenario freezes the client itself and records it with
	// Injector.Record; Node is -1 and Clients names the client.
	ClientPause Kind = "client-pause"
	// DropReply lets the next request of each of Clients reach the node
	// and run there, drops the node's reply and resets the client's
	// connection (netfault.Link.DropReply): the command took effect, the
	// client never hears it. Armed until it fires or Heal.
	DropReply Kind = "drop-reply"
	// Reset resets every connection between the node and Clients now,
	// whatever is in flight on it (netfault.Link.Reset). It needs no end.
	Reset Kind = "reset"
	// SlowSetup makes the links between the node and Clients links of
	// round-trip time Arg, connection set-up included, and resets their
	// connections so that the clients dial anew (TCP connect, AUTH,
	// SELECT) at that latency (netfault.Link.SlowSetup). Until Heal.
	SlowSetup Kind = "slow-setup"
	// Multi makes each of Clients send MULTI to the node through its own
	// shared (pipelined) connection, by Injector.SendCommand, as an
	// application calling Node.Do(ctx, "MULTI") would. A library that
	// refuses state-changing commands on a shared connection returns an
	// error, which the injector notes and ignores; one that accepts it
	// turns the shared connection into a transaction, and Heal (or HealAll)
	// sends DISCARD through the same connection to end it.
	Multi Kind = "multi"
	// DelayRequests delays by Arg every byte that the connections of
	// Clients to the node, open now (or the next one, when none is),
	// carry to the node (netfault.Link.Delay): commands reach the node
	// after their caller gave up, after the client closed the connection
	// and reached the node again over a new one, which is not delayed.
	// Until Heal; bytes already delayed keep their time.
	DelayRequests Kind = "delay-requests"
	// DelayReplies is DelayRequests for the node's replies: the node runs
	// the commands at once, their replies reach the client Arg later.
	DelayReplies Kind = "delay-replies"
	// ScriptFlush empties the node's script cache (SCRIPT FLUSH): the next
	// EVALSHA of every client gets NOSCRIPT. It needs no end.
	ScriptFlush Kind = "script-flush"
	// RestartKept restarts the node the way a master with AOF and
	// appendfsync always restarts (cluster.RestartKept): every connection
	// closed, the script cache empty, every key back. It needs no end. A
	// backend that cannot do it (Docker, Compose, without persistence)
	// logs it as not injected.
	RestartKept Kind = "restart-kept"
)

// Generic are the faults that no scenario aims at a known bug: bytes of a
// connection that arrive after their caller gave up (either way), a
// script cache emptied at a random moment, a master restarted with its
// data. Every one keeps the masters' data.
var Generic = []Kind{DelayRequests, DelayReplies, ScriptFlush, RestartKept}

// Injects reports whether k injects a fault (rather than ending one).
func (k Kind) Injects() bool {
	switch k {
	case Kill, Restart, Pause, Slow, Cut, ClockJump, ClientPause, DropReply, Reset, SlowSetup, Multi,
		DelayRequests, DelayReplies, ScriptFlush, RestartKept:
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
	// Clients are the clients whose links Slow, SlowSetup, Cut, DropReply,
	// Reset, Multi and Heal act on; nil means every client.
	Clients []int `json:"clients,omitempty"`
	// Arg is the latency of Slow, the round-trip time of SlowSetup, the
	// delay of Restart, DelayRequests and DelayReplies, the jump of
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
	case SlowSetup:
		return fmt.Sprintf("slow-setup %s to %v RTT for %s", node, f.Arg, clients)
	case DropReply:
		return fmt.Sprintf("drop the next reply of %s to %s", node, clients)
	case Reset:
		return fmt.Sprintf("reset the connections of %s to %s", node, clients)
	case Multi:
		return fmt.Sprintf("multi on %s from %s", node, clients)
	case DelayRequests:
		return fmt.Sprintf("delay the requests of %s to %s by %v", clients, node, f.Arg)
	case DelayReplies:
		return fmt.Sprintf("delay the replies of %s to %s by %v", node, clients, f.Arg)
	case RestartKept:
		return fmt.Sprintf("restart %s keeping its data", node)
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
