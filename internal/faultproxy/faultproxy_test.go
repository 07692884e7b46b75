package faultproxy_test

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/faultproxy"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// redisproc's process reaper ends with the process, after Close.
		goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/internal/redisproc.(*Server).Start.func1"))
}

// start starts a master and a proxy to it.
func start(t *testing.T) (*redisproc.Server, *faultproxy.Proxy) {
	t.Helper()
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	p, err := faultproxy.Start(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv, p
}

// client is a raw RESP client: one line per reply is all these tests need.
type client struct {
	c net.Conn
	r *bufio.Reader
}

func dial(t *testing.T, addr string) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return &client{c: c, r: bufio.NewReader(c)}
}

func (c *client) do(cmd string) (string, error) {
	if _, err := fmt.Fprintf(c.c, "%s\r\n", cmd); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	if err == nil && strings.HasPrefix(line, "$") && line != "$-1\r\n" {
		line, err = c.r.ReadString('\n') // a bulk string's value
	}
	return strings.TrimSpace(line), err
}

func TestForwards(t *testing.T) {
	_, p := start(t)
	c := dial(t, p.Addr())
	if got, err := c.do("PING"); err != nil || got != "+PONG" {
		t.Fatalf("PING through the proxy = %q, %v", got, err)
	}
	if p.Accepted() != 1 || p.Resets() != 0 {
		t.Fatalf("Accepted, Resets = %d, %d; want 1, 0", p.Accepted(), p.Resets())
	}
}

// The master runs the command, the client gets a reset instead of the
// reply, and the fault is spent: the next connection works.
func TestResetAfterReply(t *testing.T) {
	srv, p := start(t)
	c := dial(t, p.Addr())
	if _, err := c.do("PING"); err != nil {
		t.Fatal(err)
	}
	p.ResetAfterReply(0)
	got, err := c.do("INCR k")
	if err == nil {
		t.Fatalf("INCR through a reset link = %q, want an error", got)
	}
	if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("INCR through a reset link: %v, want ECONNRESET", err)
	}
	direct := dial(t, srv.Addr())
	if got, err := direct.do("GET k"); err != nil || got != "1" {
		t.Fatalf("GET k on the master = %q, %v; want the INCR applied once", got, err)
	}
	if p.Armed() || p.Resets() != 1 {
		t.Fatalf("Armed, Resets = %v, %d; want false, 1", p.Armed(), p.Resets())
	}
	c2 := dial(t, p.Addr())
	if got, err := c2.do("INCR k"); err != nil || got != ":2" {
		t.Fatalf("INCR after the fault = %q, %v; want :2", got, err)
	}
}

// Part of the reply passes, then the reset.
func TestResetAfterPartOfReply(t *testing.T) {
	_, p := start(t)
	c := dial(t, p.Addr())
	if _, err := c.do("PING"); err != nil {
		t.Fatal(err)
	}
	p.ResetAfterReply(len("+PONG\r\n"))
	if _, err := fmt.Fprint(c.c, "PING\r\nPING\r\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := c.r.ReadString('\n'); err != nil || line != "+PONG\r\n" {
		t.Fatalf("first reply = %q, %v; want it to pass", line, err)
	}
	if line, err := c.r.ReadString('\n'); err == nil {
		t.Fatalf("second reply = %q, want the reset", line)
	}
}

// Latency d per direction adds 2d to a round trip.
func TestLatency(t *testing.T) {
	_, p := start(t)
	c := dial(t, p.Addr())
	const d = 20 * time.Millisecond
	p.SetLatency(d)
	begin := time.Now()
	if got, err := c.do("PING"); err != nil || got != "+PONG" {
		t.Fatalf("PING = %q, %v", got, err)
	}
	if rtt := time.Since(begin); rtt < 2*d {
		t.Fatalf("round trip %v with latency %v per direction, want >= %v", rtt, d, 2*d)
	}
}

func TestResetAll(t *testing.T) {
	_, p := start(t)
	c := dial(t, p.Addr())
	if _, err := c.do("PING"); err != nil {
		t.Fatal(err)
	}
	p.ResetAll()
	if got, err := c.do("PING"); err == nil {
		t.Fatalf("PING after ResetAll = %q, want an error", got)
	}
	if p.Resets() != 1 {
		t.Fatalf("Resets = %d, want 1", p.Resets())
	}
}
