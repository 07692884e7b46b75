package netfault

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// Net is a mesh of proxies: one Link per (client, node).
type Net struct {
	links [][]*Link // [client][node]
}

// New starts a proxy on a free port of 127.0.0.1 for every client and every
// upstream address.
func New(upstreams []string, clients int) (*Net, error) {
	n := &Net{links: make([][]*Link, clients)}
	for c := range clients {
		for _, up := range upstreams {
			l, err := listen(up)
			if err != nil {
				n.Close()
				return nil, err
			}
			n.links[c] = append(n.links[c], l)
		}
	}
	return n, nil
}

// Link returns the link from client to node.
func (n *Net) Link(client, node int) *Link { return n.links[client][node] }

// Clients is the number of clients.
func (n *Net) Clients() int { return len(n.links) }

// Addrs returns the proxy addresses through which client reaches the nodes,
// in node order.
func (n *Net) Addrs(client int) []string {
	addrs := make([]string, len(n.links[client]))
	for i, l := range n.links[client] {
		addrs[i] = l.Addr()
	}
	return addrs
}

// Close stops every proxy, closes every connection through it and waits
// until all of its goroutines have ended.
func (n *Net) Close() {
	for _, links := range n.links {
		for _, l := range links {
			l.close()
		}
	}
}

// Link is the proxy between one client and one node: it accepts the
// client's connections, connects each to the node, and copies bytes both
// ways, subject to the link's fault. A link has at most one fault at a time
// (Slow, SlowSetup, Cut, DropReply or Delay; each replaces the one before,
// Heal removes it); Reset is an action on the connections, not a fault. Its
// methods are safe for concurrent use.
type Link struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup
	done     chan struct{} // closed by close

	mu      sync.Mutex
	f       linkFault
	changed chan struct{} // closed when the fault changes or the link closes
	conns   map[*conn]struct{}
	stats   Stats
	closed  bool
	lastDue time.Time // the latest time a chunk read so far is due (LateUntil)
	held    []*span   // when the link held chunks back (HeldAt)
}

// linkFault is the fault of a link; the zero value is a healthy link.
type linkFault struct {
	request time.Duration // added to every request
	reply   time.Duration // added to every reply
	setup   time.Duration // added before a new connection reaches the node
	cut     bool          // hold every byte, both ways
	drops   int           // replies still to drop, resetting their connection
	// next is the delay, per Direction, of the next connection accepted
	// (Delay on a link without a connection).
	next [2]time.Duration
}

// Stats counts what a link did to its connections.
type Stats struct {
	// Accepted is the number of client connections accepted.
	Accepted int
	// Resets is the number of client connections reset (by Reset, or by a
	// dropped reply).
	Resets int
	// Dropped is the number of replies dropped by DropReply: each proves
	// that the node ran what it was sent before the client was cut off.
	Dropped int
}

func listen(upstream string) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: proxy to %s: %w", upstream, err)
	}
	l := &Link{ln: ln, upstream: upstream, done: make(chan struct{}),
		conns: map[*conn]struct{}{}, changed: make(chan struct{})}
	l.wg.Go(l.accept)
	return l, nil
}

// Addr is the address the client dials instead of the node's.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Slow delays every request to the node by latency (so the node also
// executes it later, and requests of different clients can be reordered),
// replacing any fault the link had. Replies are not delayed, and neither is
// the TCP connect (the proxy's kernel accepts at once), but the requests of
// a connection's set-up (AUTH, SELECT) are, each by latency.
func (l *Link) Slow(latency time.Duration) error {
	if latency < 0 {
		return fmt.Errorf("netfault: negative latency %v", latency)
	}
	l.set(linkFault{request: latency})
	return nil
}

// SlowSetup makes the link one of round-trip time rtt, connection set-up
// included, replacing any fault the link had: every request and every reply
// is delayed by rtt/2, and a connection accepted from now on reaches the
// node only rtt later (its TCP connect), so that a client dialing anew pays
// rtt for the connect and rtt for each set-up command (AUTH, SELECT), as
// over a real link of that RTT. Connections made before keep their fast
// start; Reset them to make the client dial anew under the latency.
func (l *Link) SlowSetup(rtt time.Duration) error {
	if rtt < 0 {
		return fmt.Errorf("netfault: negative round-trip time %v", rtt)
	}
	l.set(linkFault{request: rtt / 2, reply: rtt - rtt/2, setup: rtt})
	return nil
}

// Cut stops every byte between the client and the node, both ways,
// replacing any fault the link had. Connections stay open and new ones are
// accepted, but nothing gets through until Heal, which delivers what was
// held, in order: what TCP does when a partition heals before the
// connection gives up. (Dropping bytes from a live connection would be no
// network fault at all, and would desynchronise pipelined clients.)
func (l *Link) Cut() error {
	l.set(linkFault{cut: true})
	return nil
}

// DropReply arms the link to drop the next n replies of the node, replacing
// any fault the link had: requests go through as usual and the node runs
// them, but the first bytes it sends back on any connection of the link are
// dropped, and that connection is reset (the client sees ECONNRESET), n
// times. It is what a node that crashes after running a command (and
// fsyncing it), a CLIENT KILL or a middlebox that resets the connection
// does: the command took effect, and the client never hears of it. With
// pipelining the dropped bytes can hold the replies of several callers; all
// of them see the reset. Heal disarms the drops that have not happened.
func (l *Link) DropReply(n int) error {
	if n <= 0 {
		return fmt.Errorf("netfault: drop %d replies", n)
	}
	l.set(linkFault{drops: n})
	return nil
}

// Reset resets every connection of the link now, with an RST to the
// client, whatever is in flight on it: requests held by a fault are never
// delivered, requests the node already ran lose their replies. The link's
// fault is unchanged and new connections are accepted. It returns the
// number of connections reset.
func (l *Link) Reset() int {
	l.mu.Lock()
	conns := make([]*conn, 0, len(l.conns))
	for c := range l.conns {
		conns = append(conns, c)
	}
	l.stats.Resets += len(conns)
	l.mu.Unlock()
	for _, c := range conns {
		c.reset()
	}
	return len(conns)
}

// Direction is a direction of the bytes on a link.
type Direction int

// The directions.
const (
	// Requests go from the client to the node.
	Requests Direction = iota
	// Replies go from the node to the client.
	Replies
)

// String returns "requests" or "replies".
func (d Direction) String() string {
	if d == Replies {
		return "replies"
	}
	return "requests"
}

// Delay delays by d every byte that the connections open now carry in
// direction dir from now on (or, when none is open, the next connection
// accepted), replacing any fault the link had; connections accepted later
// are not delayed. So bytes can arrive long after the client gave up on
// them: after its node timeout, after it closed the connection (a stall
// timeout) and reached the node again over a new, fast connection. Bytes
// a client wrote before it closed its connection are still delivered, in
// order, at their time, and the node then sees the close, as over TCP.
// Heal ends the delay for the bytes read from then on; bytes already
// delayed keep their time. It returns the number of connections delayed
// now (0: the next one will be).
func (l *Link) Delay(dir Direction, d time.Duration) (int, error) {
	if d < 0 {
		return 0, fmt.Errorf("netfault: negative delay %v", d)
	}
	if dir != Requests && dir != Replies {
		return 0, fmt.Errorf("netfault: no direction %d", dir)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f := linkFault{}
	n := 0
	for c := range l.conns {
		c.delay[dir] = d
		n++
	}
	if n == 0 {
		f.next[dir] = d
	}
	l.setLocked(f, false)
	return n, nil
}

// Mark is where the requests of a link's connections stood at one moment
// (Link.Sent).
type Mark map[*conn]int64

// Sent returns where the requests that the link's client sent so far
// stand: Delivered reports when every one of them has reached the node
// (or was dropped with its connection), however late a fault makes them.
func (l *Link) Sent() Mark {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(Mark, len(l.conns))
	for c := range l.conns {
		m[c] = c.queued.Load()
	}
	return m
}

// Delivered reports whether every request the link had read when m was
// taken has been written to the node, or dropped: by a reset, or with a
// connection the node or the client closed.
func (l *Link) Delivered(m Mark) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c, queued := range m {
		if _, open := l.conns[c]; open && c.handled.Load() < queued {
			return false
		}
	}
	return true
}

// Heal removes the link's fault.
func (l *Link) Heal() { l.set(linkFault{}) }

// Stats returns what the link did so far.
func (l *Link) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}

func (l *Link) set(f linkFault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setLocked(f, true)
}

// setLocked makes f the link's fault, ending the delays of its
// connections (Delay) if clear is set.
func (l *Link) setLocked(f linkFault, clear bool) {
	l.f = f
	if clear {
		for c := range l.conns {
			c.delay = [2]time.Duration{}
		}
	}
	l.notifyLocked()
}

// notifyLocked wakes the writers waiting for the fault to change.
func (l *Link) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// awaitOpen waits until the link is not cut, and reports false if the link
// or the connection (done) closed first.
func (l *Link) awaitOpen(done <-chan struct{}) bool {
	for {
		l.mu.Lock()
		cut, changed, closed := l.f.cut, l.changed, l.closed
		l.mu.Unlock()
		switch {
		case closed:
			return false
		case !cut:
			return true
		}
		select {
		case <-changed:
		case <-done:
			return false
		}
	}
}

// stamp returns the chunk of b, read from c, due after the link's latency
// and c's own delay in its direction, or drop=true when the link drops it
// (a reply, while DropReply is armed).
func (l *Link) stamp(c *conn, b []byte, request bool) (ch chunk, drop bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delay := l.f.reply + c.delay[Replies]
	if request {
		delay = l.f.request + c.delay[Requests]
	} else if l.f.drops > 0 {
		l.f.drops--
		l.stats.Dropped++
		l.stats.Resets++
		return chunk{}, true
	}
	now := time.Now()
	ch = chunk{b: append([]byte(nil), b...), read: now, due: now.Add(delay)}
	if ch.due.After(l.lastDue) {
		l.lastDue = ch.due
	}
	return ch, false
}

// LateUntil is the latest time at which a byte the link has read so far,
// either way, is due on the other side: a fault (Slow, Delay) may deliver
// bytes that long after they were sent. Bytes a cut holds are due when
// the cut heals, which LateUntil does not know.
func (l *Link) LateUntil() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lastDue
}

// track registers c so that close and Reset reach it, and returns the
// set-up delay of the link; it reports false (and closes c) once the link
// is closed.
func (l *Link) track(c *conn) (setup time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.close()
		return 0, false
	}
	l.conns[c] = struct{}{}
	l.stats.Accepted++
	if l.f.next != ([2]time.Duration{}) {
		c.delay, l.f.next = l.f.next, [2]time.Duration{}
	}
	return l.f.setup, true
}

func (l *Link) untrack(c *conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
	c.close()
}

func (l *Link) close() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed = true
	close(l.done)
	for c := range l.conns {
		c.close()
	}
	l.notifyLocked()
	l.mu.Unlock()
	l.ln.Close()
	l.wg.Wait()
}
