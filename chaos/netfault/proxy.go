package netfault

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// conn is one proxied connection: the client's side and, once dialed, the
// node's.
type conn struct {
	client net.Conn
	done   chan struct{} // closed by close
	// delay is added to the bytes of each Direction (Link.Delay); guarded
	// by the link's mutex.
	delay [2]time.Duration
	// queued counts the chunks of requests read from the client, handled
	// those of them written to the node or dropped (Link.Sent).
	queued, handled atomic.Int64

	mu     sync.Mutex
	server net.Conn
	closed bool
}

func newConn(client net.Conn) *conn {
	return &conn{client: client, done: make(chan struct{})}
}

// attach sets the node's side; it reports false (and closes server) if the
// connection was closed first.
func (c *conn) attach(server net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		server.Close()
		return false
	}
	c.server = server
	return true
}

// close closes both sides; what is still queued for either is dropped.
func (c *conn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	c.closed = true
	close(c.done)
	c.client.Close()
	if c.server != nil {
		c.server.Close()
	}
}

// reset closes both sides, the client's with an RST instead of a FIN, so
// that the client reads ECONNRESET rather than EOF.
func (c *conn) reset() {
	if tc, ok := c.client.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	c.close()
}

func (l *Link) accept() {
	for {
		client, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		l.wg.Go(func() { l.serve(newConn(client)) })
	}
}

// serve connects c to the node and copies both ways until either side
// closes. Under SlowSetup the node is dialed only after the set-up delay (the
// client's bytes wait in the socket meanwhile), which is the round trip of
// a TCP connect. A node that refuses the connection (it is down) closes the
// client's.
func (l *Link) serve(c *conn) {
	setup, ok := l.track(c)
	if !ok {
		return
	}
	defer l.untrack(c)
	if !wait(setup, c.done, l.done) {
		return
	}
	server, err := net.DialTimeout("tcp", l.upstream, 5*time.Second)
	if err != nil || !c.attach(server) {
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { l.pipe(c, c.client, server, false) })
	l.pipe(c, server, c.client, true)
	wg.Wait()
}

// wait waits d, and reports false if either channel closed first.
func wait(d time.Duration, a, b <-chan struct{}) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-a:
	case <-b:
	}
	return false
}

// chunk is bytes read from one side, due on the other at a time.
type chunk struct {
	b         []byte
	read, due time.Time
}

// pipe copies src to dst until src fails, applying the link's fault: a
// chunk is delayed by the latency of its direction (and its connection's
// delay), nothing is written while the link is cut, and a reply the link
// drops resets the connection. A separate writer keeps the order of the
// bytes; when src ends, it still delivers what it holds (once the link is
// healed, each chunk at its time), as TCP delivers the data sent before a
// FIN, unless the connection was reset. Then the requests' pipe passes the
// client's close on to the node as a FIN (the node runs what it got, then
// closes its side, which ends the replies' pipe), and the replies' pipe
// closes the connection, both sides.
func (l *Link) pipe(c *conn, dst, src net.Conn, request bool) {
	queue := make(chan chunk, 256)
	delivered := make(chan bool, 1)
	go func() {
		broken := false
		for ch := range queue {
			if broken {
				if request {
					c.handled.Add(1)
				}
				continue // drain until the reader stops
			}
			var held *span
			if time.Until(ch.due) > 0 || l.isCut() {
				held = l.holding(ch.read)
			}
			open := wait(time.Until(ch.due), c.done, l.done) && l.awaitOpen(c.done)
			l.released(held) // before the write: its reply may come at once
			if !open {
				broken = true
			} else if _, err := dst.Write(ch.b); err != nil {
				broken = true
			}
			if request {
				c.handled.Add(1)
			}
		}
		delivered <- !broken
	}()
	buf := make([]byte, 32<<10)
	dropped := false
	for {
		n, err := src.Read(buf)
		if n > 0 {
			ch, drop := l.stamp(c, buf[:n], request)
			if drop {
				c.reset()
				dropped = true
				break
			}
			if request {
				c.queued.Add(1)
			}
			queue <- ch
		}
		if err != nil {
			break // EOF, reset or closed
		}
	}
	close(queue)
	ok := <-delivered
	if hc, half := dst.(interface{ CloseWrite() error }); request && ok && !dropped && half && hc.CloseWrite() == nil {
		return // the replies' pipe closes the connection once the node did
	}
	c.close()
}
