// Package faultproxy is a loopback TCP proxy that injects connection faults
// between a client and one real redis-server, for tests of the transport.
//
// It has two faults, which can be combined:
//
//   - Latency: every chunk of bytes, in either direction, is delivered d
//     after it was read (a link with a round trip of 2d more than
//     loopback's), in order.
//   - ResetAfterReply: the next bytes the server sends are forwarded only up
//     to a given count, the rest is dropped, and both connections are reset
//     (the client sees ECONNRESET). With a count of 0 this is "the master ran
//     the command, then the connection died before the reply": the bytes the
//     proxy read prove that the server executed what it was sent.
//
// Proxies do not parse the protocol; the tests that use them do, by reading
// the master directly.
package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy accepts connections on a free port of 127.0.0.1 and connects each
// to one upstream address. Its methods are safe for concurrent use.
type Proxy struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	mu       sync.Mutex
	latency  time.Duration
	armed    bool // ResetAfterReply is pending
	pass     int  // reply bytes still to forward while armed
	conns    map[*link]struct{}
	accepted int
	resets   int
	closed   bool
}

// Start starts a proxy to upstream ("host:port").
func Start(upstream string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: proxy to %s: %w", upstream, err)
	}
	p := &Proxy{ln: ln, upstream: upstream, conns: map[*link]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the address to dial instead of the upstream's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetLatency delays every chunk read from now on, in each direction, by d
// (0 removes the delay). Bytes keep their order.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = max(d, 0)
}

// ResetAfterReply arms a one-shot fault: of the next bytes any server
// connection sends, pass bytes are forwarded to the client, the rest is
// dropped, and that client and server connection are both reset.
func (p *Proxy) ResetAfterReply(pass int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed, p.pass = true, max(pass, 0)
}

// Armed reports whether a ResetAfterReply is still waiting for reply bytes.
func (p *Proxy) Armed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.armed
}

// ResetAll resets every open connection now, as a middlebox that drops its
// connection table does.
func (p *Proxy) ResetAll() {
	p.mu.Lock()
	links := make([]*link, 0, len(p.conns))
	for l := range p.conns {
		links = append(links, l)
	}
	p.resets += len(links)
	p.mu.Unlock()
	for _, l := range links {
		l.reset()
	}
}

// Accepted is the number of client connections accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// Resets is the number of connections the proxy has reset so far.
func (p *Proxy) Resets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resets
}

// Close stops accepting, closes every connection and waits until every
// goroutine of the proxy has ended.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.conns {
		l.close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.wg.Go(func() { p.serve(c) })
	}
}

// link is one proxied connection: the client's and the server's side.
type link struct {
	client, server net.Conn
	done           chan struct{}
	once           sync.Once
}

func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.client.Close()
		l.server.Close()
	})
}

// reset closes both sides with an RST instead of a FIN.
func (l *link) reset() {
	for _, c := range []net.Conn{l.client, l.server} {
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetLinger(0)
		}
	}
	l.close()
}

// serve connects c to the upstream and copies both ways until one side
// ends or a fault resets the link.
func (p *Proxy) serve(c net.Conn) {
	server, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	l := &link{client: c, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.close()
		return
	}
	p.conns[l] = struct{}{}
	p.accepted++
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { p.pipe(l, l.server, l.client, false) })
	p.pipe(l, l.client, l.server, true)
	wg.Wait()
	l.close()
	p.mu.Lock()
	delete(p.conns, l)
	p.mu.Unlock()
}

// chunk is bytes read from one side, due on the other at a time; reset
// ends the link once they are written.
type chunk struct {
	b     []byte
	due   time.Time
	reset bool
}

// pipe copies src to dst with the proxy's faults until either ends.
// fromServer marks the reply direction, the one ResetAfterReply cuts.
func (p *Proxy) pipe(l *link, dst, src net.Conn, fromServer bool) {
	queue := make(chan chunk, 64)
	var wg sync.WaitGroup
	wg.Go(func() { p.deliver(l, dst, queue) })
	defer wg.Wait()
	defer close(queue)
	for {
		buf := make([]byte, 32<<10)
		n, err := src.Read(buf)
		if n > 0 {
			ch := p.fault(buf[:n], fromServer)
			select {
			case queue <- ch:
			case <-l.done:
				return
			}
			if ch.reset {
				return
			}
		}
		if err != nil {
			l.close()
			return
		}
	}
}

// fault stamps b with its due time and applies an armed ResetAfterReply.
func (p *Proxy) fault(b []byte, fromServer bool) chunk {
	p.mu.Lock()
	defer p.mu.Unlock()
	ch := chunk{b: b, due: time.Now().Add(p.latency)}
	if fromServer && p.armed {
		if len(b) < p.pass {
			p.pass -= len(b)
		} else {
			ch.b, ch.reset = b[:p.pass], true
			p.armed, p.pass = false, 0
			p.resets++
		}
	}
	return ch
}

// deliver writes the queued chunks to dst at their due times.
func (p *Proxy) deliver(l *link, dst net.Conn, queue <-chan chunk) {
	for ch := range queue {
		if d := time.Until(ch.due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
			}
		}
		if len(ch.b) > 0 {
			if _, err := dst.Write(ch.b); err != nil {
				l.close()
			}
		}
		if ch.reset {
			l.reset()
		}
	}
}
