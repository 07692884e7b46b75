package fault

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/nodeutil"
)

// Applied is a fault as the Injector applied it.
type Applied struct {
	Fault
	// Start and End are the offsets on the run's timeline at which applying
	// the fault began and ended (a restart takes its delay and the time to
	// come back).
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Note says what the fault did when that is not obvious, e.g. how many
	// keys a clock jump expired.
	Note string `json:"note,omitempty"`
	// Err is the error of a fault that could not be applied.
	Err string `json:"err,omitempty"`
}

// Injector applies faults to one cluster and the proxies in front of it. It
// is safe for concurrent use once SendCommand is set.
type Injector struct {
	// SendCommand sends one command from client to node through the
	// client's own shared (pipelined) connection, the one its lock calls
	// use (the scenario wires it to the workload's pool.Node of that client
	// and node), and returns the command's error. The Multi fault sends
	// MULTI with it, and Heal sends DISCARD with it where a MULTI was
	// accepted. Set it before Run or Apply; while it is nil, Multi fails.
	SendCommand func(ctx context.Context, client, node int, cmd string, args ...any) error

	nodes []cluster.Node
	net   *netfault.Net
	base  time.Time

	mu     sync.Mutex
	log    []Applied
	down   map[int]bool // killed by us and not started again
	paused map[int]bool
	multi  map[link]bool // MULTI accepted and not yet discarded
	// stateSent counts the connection-state commands sent (sendMulti).
	stateSent int
}

// link is a (client, node) pair.
type link struct{ client, node int }

// NewInjector returns an injector for the nodes of c and the links of net
// (nil if there are no proxies: link faults then fail). Offsets in its log
// count from base.
func NewInjector(c cluster.Cluster, net *netfault.Net, base time.Time) *Injector {
	return &Injector{nodes: c.Nodes(), net: net, base: base,
		down: map[int]bool{}, paused: map[int]bool{}, multi: map[link]bool{}}
}

// Apply applies f now (f.At is ignored) and logs it.
func (in *Injector) Apply(ctx context.Context, f Fault) error {
	if err := in.noNode(f); err != nil {
		return err
	}
	begun := time.Since(in.base)
	note, err := in.apply(ctx, f)
	err = in.logged(f, begun, note, err)
	if errors.Is(err, cluster.ErrUnsupported) {
		return nil // logged with its error, so not counted as injected: the backend cannot do it
	}
	return err
}

// noNode is the error of f when its node is none of the injector's, or nil.
func (in *Injector) noNode(f Fault) error {
	if f.Node < 0 || f.Node >= len(in.nodes) {
		return fmt.Errorf("fault: %s: no node %d", f, f.Node)
	}
	return nil
}

// logged logs f, applied from begun until now with the note and error of
// its application, and returns the error prefixed with f.
func (in *Injector) logged(f Fault, begun time.Duration, note string, err error) error {
	a := Applied{Fault: f, Start: begun, End: time.Since(in.base), Note: note}
	if err != nil {
		err = fmt.Errorf("fault: %s: %w", f, err)
		a.Err = err.Error()
	}
	in.mu.Lock()
	in.log = append(in.log, a)
	in.mu.Unlock()
	return err
}

func (in *Injector) apply(ctx context.Context, f Fault) (string, error) {
	n := in.nodes[f.Node]
	switch f.Kind {
	case Kill:
		in.setState(f.Node, true, false)
		return "", n.Kill(ctx)
	case Start:
		err := n.Start(ctx)
		if err == nil {
			in.setState(f.Node, false, false)
		}
		return "", err
	case Restart:
		in.setState(f.Node, true, false)
		err := cluster.Restart(ctx, n, f.Arg)
		if err == nil {
			in.setState(f.Node, false, false)
		}
		return "", err
	case Pause:
		in.setState(f.Node, false, true)
		return "", n.Pause(ctx)
	case Resume:
		err := n.Resume(ctx)
		if err == nil {
			in.setState(f.Node, false, false)
		}
		return "", err
	case RestartKept:
		in.setState(f.Node, true, false)
		err := cluster.RestartKept(ctx, n)
		if err == nil || errors.Is(err, cluster.ErrUnsupported) {
			in.setState(f.Node, false, false)
		}
		return "", err
	case ScriptFlush:
		return "", cluster.ScriptFlush(ctx, n.Addr())
	case ClockJump:
		r, err := cluster.ClockJump(ctx, n.Addr(), f.Arg)
		return fmt.Sprintf("%d keys expired, %d shifted", r.Expired, r.Shifted), err
	case Slow, Cut, SlowSetup, DropReply, Reset, DelayRequests, DelayReplies:
		return in.link(f)
	case Heal:
		note, err := in.link(f)
		return joinNotes(note, in.discard(ctx, f)), err
	case Multi:
		return in.sendMulti(ctx, f)
	default:
		return "", fmt.Errorf("unknown kind %q", f.Kind)
	}
}

// setState records what a fault did to a node, for HealAll.
func (in *Injector) setState(node int, down, paused bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.down[node], in.paused[node] = down, paused
}

// clients returns the clients f acts on: f.Clients, or every client of the
// proxies when nil.
func (in *Injector) clients(f Fault) ([]int, error) {
	if f.Clients != nil {
		return f.Clients, nil
	}
	if in.net == nil {
		return nil, errors.New("no proxies in front of the nodes, and no clients named")
	}
	clients := make([]int, in.net.Clients())
	for c := range clients {
		clients[c] = c
	}
	return clients, nil
}

// link applies a link fault to the links between f.Node and f.Clients.
func (in *Injector) link(f Fault) (string, error) {
	if in.net == nil {
		if f.Kind == Heal {
			return "", nil // no link to heal
		}
		return "", errors.New("no proxies in front of the nodes")
	}
	clients, err := in.clients(f)
	if err != nil {
		return "", err
	}
	var errs []error
	resets, delayed := 0, 0
	for _, c := range clients {
		if c < 0 || c >= in.net.Clients() {
			errs = append(errs, fmt.Errorf("no client %d", c))
			continue
		}
		l := in.net.Link(c, f.Node)
		switch f.Kind {
		case Slow:
			errs = append(errs, l.Slow(f.Arg))
		case Cut:
			errs = append(errs, l.Cut())
		case SlowSetup:
			// Connections made before would keep their fast set-up: reset
			// them so that the clients dial anew under the latency.
			errs = append(errs, l.SlowSetup(f.Arg))
			resets += l.Reset()
		case DropReply:
			errs = append(errs, l.DropReply(1))
		case Reset:
			resets += l.Reset()
		case DelayRequests, DelayReplies:
			dir := netfault.Requests
			if f.Kind == DelayReplies {
				dir = netfault.Replies
			}
			n, err := l.Delay(dir, f.Arg)
			delayed += n
			errs = append(errs, err)
		case Heal:
			l.Heal()
		}
	}
	note := ""
	switch f.Kind {
	case Reset, SlowSetup:
		note = fmt.Sprintf("%d connections reset", resets)
	case DelayRequests, DelayReplies:
		note = fmt.Sprintf("%d open connections delayed (a link without one: its next)", delayed)
	}
	return note, errors.Join(errs...)
}

// skipWait bounds the wait for a CLIENT REPLY SKIP that went out.
const skipWait = 100 * time.Millisecond

// subcommand is an application's own string type for a command word: a
// check of shared connections that reads only string and []byte arguments
// lets it through, while the client writes it as its text.
type subcommand string

// sendMulti sends a command that changes the state of a connection from
// each client of f to f.Node, as an application misusing a shared
// connection would: every other time MULTI, else CLIENT REPLY SKIP with the
// subcommand of its own Go type (the master then answers nothing for the
// next command, and every reply after it goes to the command before). A
// refusal is the expected outcome with a library that guards its shared
// connections: it is noted, not an error.
func (in *Injector) sendMulti(ctx context.Context, f Fault) (string, error) {
	if in.SendCommand == nil {
		return "", errors.New("Injector.SendCommand is not set")
	}
	clients, err := in.clients(f)
	if err != nil {
		return "", err
	}
	var notes []string
	for _, c := range clients {
		in.mu.Lock()
		in.stateSent++
		skip := in.stateSent%2 == 0
		in.mu.Unlock()
		if skip {
			// A master answers CLIENT REPLY SKIP with nothing: the call
			// gets a refusal at once, or, sent, no reply (or another
			// command's); it is not waited for past a short bound.
			sctx, cancel := context.WithTimeout(ctx, skipWait)
			err := in.SendCommand(sctx, c, f.Node, "CLIENT", subcommand("REPLY"), "SKIP")
			cancel()
			if errors.Is(err, nodeutil.ErrConnState) {
				notes = append(notes, fmt.Sprintf("client %d: CLIENT REPLY SKIP refused (%v)", c, err))
				continue
			}
			notes = append(notes, fmt.Sprintf("client %d: CLIENT REPLY SKIP ACCEPTED (%v)", c, err))
			continue
		}
		if err := in.SendCommand(ctx, c, f.Node, "MULTI"); err != nil {
			notes = append(notes, fmt.Sprintf("client %d: refused (%v)", c, err))
			continue
		}
		in.mu.Lock()
		in.multi[link{c, f.Node}] = true
		in.mu.Unlock()
		notes = append(notes, fmt.Sprintf("client %d: ACCEPTED (DISCARD at heal)", c))
	}
	return joinNotes(notes...), nil
}

// discard sends DISCARD from each client of f to f.Node whose MULTI was
// accepted, so that a library which let a MULTI through gets its shared
// connection back out of the transaction. It returns a note of what it did.
func (in *Injector) discard(ctx context.Context, f Fault) string {
	clients, err := in.clients(f)
	if err != nil || in.SendCommand == nil {
		return ""
	}
	var notes []string
	for _, c := range clients {
		l := link{c, f.Node}
		in.mu.Lock()
		open := in.multi[l]
		delete(in.multi, l)
		in.mu.Unlock()
		if !open {
			continue
		}
		res := "ok"
		if err := in.SendCommand(ctx, c, f.Node, "DISCARD"); err != nil {
			res = err.Error()
		}
		notes = append(notes, fmt.Sprintf("client %d: DISCARD %s", c, res))
	}
	return joinNotes(notes...)
}

// joinNotes joins the non-empty notes with "; ".
func joinNotes(notes ...string) string {
	return strings.Join(slices.DeleteFunc(notes, func(s string) bool { return s == "" }), "; ")
}

// Record logs a fault that was applied by other means, such as a
// ClientPause, from start to end (offsets on the run's timeline).
func (in *Injector) Record(f Fault, start, end time.Duration, note string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.log = append(in.log, Applied{Fault: f, Start: start, End: end, Note: note})
}

// HealAll ends every fault the injector left in place: it resumes paused
// nodes, starts killed ones, heals every link and sends DISCARD where a
// MULTI was accepted. The steps that end a fault are logged.
func (in *Injector) HealAll(ctx context.Context) error {
	in.mu.Lock()
	var todo []Fault
	for i := range in.nodes {
		switch {
		case in.paused[i]:
			todo = append(todo, Fault{Kind: Resume, Node: i})
		case in.down[i]:
			todo = append(todo, Fault{Kind: Start, Node: i})
		}
	}
	for l := range in.multi {
		todo = append(todo, Fault{Kind: Heal, Node: l.node, Clients: []int{l.client}})
	}
	in.mu.Unlock()
	var errs []error
	for _, f := range todo {
		errs = append(errs, in.Apply(ctx, f))
	}
	if in.net != nil {
		for c := range in.net.Clients() {
			for i := range in.nodes {
				in.net.Link(c, i).Heal()
			}
		}
	}
	return errors.Join(errs...)
}

// Log returns the faults applied so far, ordered by start.
func (in *Injector) Log() []Applied {
	in.mu.Lock()
	defer in.mu.Unlock()
	l := slices.Clone(in.log)
	slices.SortStableFunc(l, func(a, b Applied) int { return cmp.Compare(a.Start, b.Start) })
	return l
}

// Injected counts the faults injected so far (not those that ended one).
func (in *Injector) Injected() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	n := 0
	for _, a := range in.log {
		if a.Kind.Injects() && a.Err == "" {
			n++
		}
	}
	return n
}
