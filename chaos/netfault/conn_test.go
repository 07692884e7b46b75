package netfault_test

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

// oneLink starts one node with opts and a proxy to it for one client.
func oneLink(t *testing.T, opts redisproc.Options) (*netfault.Link, *redisproc.Server) {
	t.Helper()
	servers := redistest.Start(t, 1, opts)
	n, err := netfault.New(redistest.Addrs(servers), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return n.Link(0, 0), servers[0]
}

// direct runs one command on the node itself, bypassing the proxy.
func direct(t *testing.T, addr, cmd string, args ...any) any {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialReadTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		t.Fatalf("%s on the node: %v", cmd, err)
	}
	return v
}

// readErr reads from c until it fails, and returns the error.
func readErr(c net.Conn) error {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			return err
		}
	}
}

// TestDropReply checks that the node runs the request whose reply is
// dropped, that the client sees a reset (not a timeout, not a reply), and
// that the link works again once the armed drops are spent.
func TestDropReply(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	if err := l.DropReply(0); err == nil {
		t.Error("DropReply(0): nil error")
	}
	if err := l.DropReply(1); err != nil {
		t.Fatal(err)
	}
	raw, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Write([]byte("INCR dropped\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := readErr(raw); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("read after a dropped reply: %v, want ECONNRESET", err)
	}
	if v, _ := redis.Int(direct(t, s.Addr(), "GET", "dropped"), nil); v != 1 {
		t.Errorf("the node's counter is %d after the dropped INCR, want 1 (it ran the command)", v)
	}
	if st := l.Stats(); st.Dropped != 1 || st.Resets != 1 || st.Accepted != 1 {
		t.Errorf("Stats() = %+v, want 1 accepted, 1 dropped, 1 reset", st)
	}
	c, err := redis.Dial("tcp", l.Addr(), redis.DialReadTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := redis.Int(c.Do("INCR", "dropped")); err != nil || v != 2 {
		t.Errorf("INCR after the drop was spent = %d, %v; want 2", v, err)
	}

	// Heal disarms drops that have not happened.
	if err := l.DropReply(3); err != nil {
		t.Fatal(err)
	}
	l.Heal()
	if v, err := redis.Int(c.Do("INCR", "dropped")); err != nil || v != 3 {
		t.Errorf("INCR after Heal = %d, %v; want 3", v, err)
	}
}

// TestResetMidPipeline checks that Reset resets every connection with
// requests in flight, that requests the link still held never reach the
// node, and that the link accepts new connections afterwards.
func TestResetMidPipeline(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 3 {
		raw, err := net.Dial("tcp", l.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer raw.Close()
		if _, err := raw.Write([]byte("INCR held\r\nINCR held\r\n")); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, raw)
	}
	// Every connection must be tracked before the reset: wait until the
	// link has accepted all three.
	for l.Stats().Accepted < 3 {
		time.Sleep(time.Millisecond)
	}
	if n := l.Reset(); n != 3 {
		t.Errorf("Reset() = %d, want 3 connections", n)
	}
	for i, raw := range conns {
		if err := readErr(raw); !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("connection %d after Reset: %v, want ECONNRESET", i, err)
		}
	}
	l.Heal()
	c, err := redis.Dial("tcp", l.Addr(), redis.DialReadTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if v, err := redis.Int(c.Do("INCR", "held")); err != nil || v != 1 {
		t.Errorf("INCR after the reset = %d, %v; want 1 (the held requests never reached the node)", v, err)
	}
	if v, _ := redis.Int(direct(t, s.Addr(), "GET", "held"), nil); v != 1 {
		t.Errorf("node's counter %d, want 1", v)
	}
	if st := l.Stats(); st.Resets != 3 || st.Dropped != 0 {
		t.Errorf("Stats() = %+v, want 3 resets and no drop", st)
	}
}

// TestSlowSetup checks that a connection made under SlowSetup pays the
// round trip for its connect and for each set-up command (AUTH here), and
// that an established connection pays it per command; Slow delays the
// set-up commands only, not the connect. Only lower bounds are asserted:
// delays guarantee them.
func TestSlowSetup(t *testing.T) {
	const password = "netfault-secret"
	l, _ := oneLink(t, redisproc.Options{Password: password})
	before, err := redis.Dial("tcp", l.Addr(), redis.DialPassword(password), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer before.Close()

	const rtt = 80 * time.Millisecond
	if err := l.SlowSetup(-rtt); err == nil {
		t.Error("SlowSetup with a negative RTT: nil error")
	}
	if err := l.SlowSetup(rtt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := before.Do("PING"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < rtt {
		t.Errorf("PING on an established connection took %v, less than the RTT %v", el, rtt)
	}

	start = time.Now()
	c, err := redis.Dial("tcp", l.Addr(), redis.DialPassword(password), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if el := time.Since(start); el < 2*rtt {
		t.Errorf("dial with AUTH took %v, less than connect+AUTH = %v", el, 2*rtt)
	}
	// The set-up delay is paid once per connection, before its first byte.
	start = time.Now()
	if _, err := c.Do("PING"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < rtt {
		t.Errorf("PING took %v, less than the RTT %v", el, rtt)
	}

	// A reset forces a redial, which pays the set-up again; a short dial
	// timeout then fails, as a client with a set-up bound below it would.
	if n := l.Reset(); n != 2 {
		t.Errorf("Reset() = %d, want 2", n)
	}
	if _, err := before.Do("PING"); err == nil {
		t.Error("PING on a reset connection: nil error")
	}
	_, err = redis.Dial("tcp", l.Addr(), redis.DialPassword(password), redis.DialReadTimeout(rtt))
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("dial with AUTH bounded by one RTT: %v, want a timeout", err)
	}
	l.Heal()
	c2, err := redis.Dial("tcp", l.Addr(), redis.DialPassword(password), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatalf("dial after Heal: %v", err)
	}
	c2.Close()
}
