package nodetest

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
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
