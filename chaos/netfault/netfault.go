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
// ways, subject to the link's fault. Its methods are safe for concurrent
// use.
type Link struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu      sync.Mutex
	latency time.Duration // added to every request
	cut     bool          // hold every byte, both ways
	changed chan struct{} // closed when the fault changes or the link closes
	conns   map[net.Conn]struct{}
	closed  bool
}

func listen(upstream string) (*Link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netfault: proxy to %s: %w", upstream, err)
	}
	l := &Link{ln: ln, upstream: upstream, conns: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	l.wg.Go(l.accept)
	return l, nil
}

// Addr is the address the client dials instead of the node's.
func (l *Link) Addr() string { return l.ln.Addr().String() }

// Slow delays every request to the node by latency (so the node also
// executes it later, and requests of different clients can be reordered),
// replacing any fault the link had.
func (l *Link) Slow(latency time.Duration) error {
	if latency < 0 {
		return fmt.Errorf("netfault: negative latency %v", latency)
	}
	l.set(latency, false)
	return nil
}

// Cut stops every byte between the client and the node, both ways,
// replacing any fault the link had. Connections stay open and new ones are
// accepted, but nothing gets through until Heal, which delivers what was
// held, in order: what TCP does when a partition heals before the
// connection gives up. (Dropping bytes from a live connection would be no
// network fault at all, and would desynchronise pipelined clients.)
func (l *Link) Cut() error {
	l.set(0, true)
	return nil
}

// Heal removes the link's fault.
func (l *Link) Heal() { l.set(0, false) }

func (l *Link) set(latency time.Duration, cut bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.latency, l.cut = latency, cut
	l.notifyLocked()
}

// notifyLocked wakes the writers waiting for the fault to change.
func (l *Link) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// fault returns the link's current fault, and a channel closed when it
// changes.
func (l *Link) fault() (latency time.Duration, cut bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latency, l.cut, l.changed
}

// awaitOpen waits until the link is not cut, and reports false if the link
// closed first.
func (l *Link) awaitOpen() bool {
	for {
		_, cut, changed := l.fault()
		if !cut {
			return true
		}
		<-changed
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			return false
		}
	}
}

// track registers c so that close can close it; it reports false (and
// closes c) once the link is closed.
func (l *Link) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		c.Close()
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Link) untrack(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	c.Close()
}

func (l *Link) close() {
	l.mu.Lock()
	l.closed = true
	for c := range l.conns {
		c.Close()
	}
	l.notifyLocked()
	l.mu.Unlock()
	l.ln.Close()
	l.wg.Wait()
}

func (l *Link) accept() {
	for {
		client, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		if !l.track(client) {
			return
		}
		l.wg.Go(func() { l.serve(client) })
	}
}

// serve connects client to the node and copies both ways until either side
// closes. A node that refuses the connection (it is down) closes the client's.
func (l *Link) serve(client net.Conn) {
	defer l.untrack(client)
	server, err := net.DialTimeout("tcp", l.upstream, 5*time.Second)
	if err != nil || !l.track(server) {
		return
	}
	defer l.untrack(server)
	var wg sync.WaitGroup
	wg.Go(func() {
		l.pipe(server, client, true)
		server.Close()
		client.Close()
	})
	l.pipe(client, server, false)
	client.Close()
	server.Close()
	wg.Wait()
}

// chunk is bytes read from one side, due on the other at a time.
type chunk struct {
	b   []byte
	due time.Time
}

// pipe copies src to dst until src fails, applying the link's fault: a
// request is delayed by the latency, and nothing is written while the link
// is cut. A separate writer keeps the order of the bytes; when src ends, it
// still delivers what it holds (once the link is healed), as TCP delivers
// the data sent before a FIN.
func (l *Link) pipe(dst, src net.Conn, request bool) {
	queue := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		broken := false
		for c := range queue {
			if broken {
				continue // drain until the reader stops
			}
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if !l.awaitOpen() {
				broken = true
				continue
			}
			if _, err := dst.Write(c.b); err != nil {
				broken = true
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			latency, _, _ := l.fault()
			if !request {
				latency = 0
			}
			queue <- chunk{b: append([]byte(nil), buf[:n]...), due: time.Now().Add(latency)}
		}
		if err != nil {
			break // EOF, reset or closed: serve closes both sides
		}
	}
	close(queue)
	<-done
}
