package nodetest

import (
	"bytes"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ReplyDropper is a TCP proxy to a Redis server for testing the rule that
// a command which may have reached a master is never sent again. It
// forwards everything, except that once a command containing its marker
// has gone to the server, it closes the client's connection when the
// server's reply arrives instead of forwarding it: the command ran, the
// client sees a broken connection. A Node that resends the command runs it
// twice.
type ReplyDropper struct {
	l      net.Listener
	target string
	marker []byte
	wg     sync.WaitGroup
}

// NewReplyDropper starts a ReplyDropper to target on a free loopback port,
// dropping the reply to the first command that contains marker on each
// connection; it stops when tb ends.
func NewReplyDropper(tb testing.TB, target, marker string) *ReplyDropper {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &ReplyDropper{l: l, target: target, marker: []byte(marker)}
	p.wg.Go(p.serve)
	tb.Cleanup(func() { l.Close(); p.wg.Wait() })
	return p
}

// Addr returns the address to dial instead of the server's.
func (p *ReplyDropper) Addr() string { return p.l.Addr().String() }

func (p *ReplyDropper) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		var seen atomic.Bool
		p.wg.Go(func() { p.requests(c, s, &seen) })
		p.wg.Go(func() { p.replies(c, s, &seen) })
	}
}

// requests copies the client's bytes to the server, noting the marker.
func (p *ReplyDropper) requests(c, s net.Conn, seen *atomic.Bool) {
	buf := make([]byte, 64<<10)
	for {
		k, err := c.Read(buf)
		if k > 0 {
			if bytes.Contains(buf[:k], p.marker) {
				seen.Store(true)
			}
			s.Write(buf[:k])
		}
		if err != nil {
			s.Close()
			return
		}
	}
}

// replies copies the server's bytes to the client until the marked command
// went out; then the next reply closes both connections instead.
func (p *ReplyDropper) replies(c, s net.Conn, seen *atomic.Bool) {
	buf := make([]byte, 64<<10)
	for {
		k, err := s.Read(buf)
		if err != nil || seen.Load() {
			c.Close()
			s.Close()
			return
		}
		c.Write(buf[:k])
	}
}

// NewBlackHole returns the address of a listener that accepts connections
// and never answers, as a frozen master does; everything closes when tb
// ends.
func NewBlackHole(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	tb.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}

// Delayer is a TCP proxy to a Redis server that holds back the first chunk
// of bytes containing its marker (on whichever connection it comes) for a
// while before it forwards it, and, behind it, everything that connection
// sends next, in order, as a slow network would. Every other connection,
// and every reply, flows at once. It shows what a Node and a Locker do with
// a command that reaches the master long after its caller gave up: after
// the node timeout, after the Node closed the connection (the bytes still
// arrive, as a TCP retransmission's would), and behind commands sent later
// on other connections.
type Delayer struct {
	l         net.Listener
	target    string
	marker    []byte
	delay     time.Duration
	held      atomic.Bool // the marked chunk was seen
	delivered atomic.Bool
	closed    atomic.Int32 // client connections closed by the client
	wg        sync.WaitGroup
}

// NewDelayer starts a Delayer to target on a free loopback port, holding
// back the first chunk containing marker for delay; it stops when tb ends.
func NewDelayer(tb testing.TB, target, marker string, delay time.Duration) *Delayer {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Delayer{l: l, target: target, marker: []byte(marker), delay: delay}
	p.wg.Go(p.serve)
	tb.Cleanup(func() { l.Close(); p.wg.Wait() })
	return p
}

// Addr returns the address to dial instead of the server's.
func (p *Delayer) Addr() string { return p.l.Addr().String() }

// Delivered reports whether the held-back chunk has been forwarded.
func (p *Delayer) Delivered() bool { return p.delivered.Load() }

// Closed is the number of connections that their client closed.
func (p *Delayer) Closed() int { return int(p.closed.Load()) }

func (p *Delayer) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.wg.Go(func() { p.requests(c, s) })
		p.wg.Go(func() {
			io.Copy(c, s)
			c.Close()
		})
	}
}

// requests copies the client's bytes to the server, holding the marked
// chunk back: a writer of its own forwards the chunks in order, so that
// the client's close is seen (Closed) while the held chunk waits. The
// server side stays open until everything the client sent went out.
func (p *Delayer) requests(c, s net.Conn) {
	chunks := make(chan []byte, 1024)
	p.wg.Go(func() {
		defer s.Close()
		for b := range chunks {
			if bytes.Contains(b, p.marker) && p.held.CompareAndSwap(false, true) {
				time.Sleep(p.delay)
				s.Write(b)
				p.delivered.Store(true)
				continue
			}
			s.Write(b)
		}
		time.Sleep(50 * time.Millisecond) // what was written reaches the server before it sees the close
	})
	defer close(chunks)
	for {
		buf := make([]byte, 64<<10)
		k, err := c.Read(buf)
		if k > 0 {
			chunks <- buf[:k]
		}
		if err != nil {
			p.closed.Add(1)
			return
		}
	}
}
