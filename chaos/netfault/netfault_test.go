package netfault_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ping(addr string, timeout time.Duration) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(timeout),
		redis.DialReadTimeout(timeout), redis.DialWriteTimeout(timeout))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}

func isTimeout(err error) bool {
	var te interface{ Timeout() bool }
	return errors.As(err, &te) && te.Timeout()
}

func TestLinkFaults(t *testing.T) {
	servers := redistest.Start(t, 2, redisproc.Options{})
	n, err := netfault.New(redistest.Addrs(servers), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if n.Clients() != 2 || len(n.Addrs(1)) != 2 {
		t.Fatalf("Clients() = %d, Addrs(1) = %v", n.Clients(), n.Addrs(1))
	}
	for c := range 2 {
		for i := range 2 {
			if err := ping(n.Link(c, i).Addr(), time.Second); err != nil {
				t.Fatalf("client %d to node %d: %v", c, i, err)
			}
		}
	}

	l := n.Link(0, 1)
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := ping(l.Addr(), 200*time.Millisecond); !isTimeout(err) {
		t.Errorf("PING over a cut link: %v, want a timeout", err)
	}
	// The cut is for client 0 only.
	if err := ping(n.Link(1, 1).Addr(), time.Second); err != nil {
		t.Errorf("client 1 to node 1 while client 0 is cut off: %v", err)
	}
	if err := ping(n.Link(0, 0).Addr(), time.Second); err != nil {
		t.Errorf("client 0 to node 0 while cut off from node 1: %v", err)
	}
	l.Heal()
	if err := ping(l.Addr(), time.Second); err != nil {
		t.Errorf("PING after heal: %v", err)
	}

	const latency = 150 * time.Millisecond
	if err := l.Slow(latency); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := ping(l.Addr(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < latency {
		t.Errorf("PING over a slow link took %v, less than its latency %v", el, latency)
	}
	if err := ping(l.Addr(), latency/3); !isTimeout(err) {
		t.Errorf("PING over a slow link with a shorter timeout: %v, want a timeout", err)
	}
	// Cut replaces Slow, and Slow replaces Cut.
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if err := l.Slow(latency); err != nil {
		t.Fatal(err)
	}
	if err := ping(l.Addr(), 5*time.Second); err != nil {
		t.Errorf("PING after Slow replaced Cut: %v", err)
	}
	l.Heal()
}

func TestLinkToDownNodeClosesConnection(t *testing.T) {
	servers := redistest.Start(t, 1, redisproc.Options{})
	n, err := netfault.New(redistest.Addrs(servers), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if err := servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	err = ping(n.Link(0, 0).Addr(), 2*time.Second)
	if err == nil || isTimeout(err) {
		t.Errorf("PING through a link to a killed node: %v, want the connection closed", err)
	}
	if err := servers[0].Start(); err != nil {
		t.Fatal(err)
	}
	if err := ping(n.Link(0, 0).Addr(), time.Second); err != nil {
		t.Errorf("PING after the node came back: %v", err)
	}
}

// TestCutHoldsUntilHeal checks that a cut delivers nothing, and that Heal
// delivers what was sent during the cut, in order, on the same connection.
func TestCutHoldsUntilHeal(t *testing.T) {
	servers := redistest.Start(t, 1, redisproc.Options{})
	n, err := netfault.New(redistest.Addrs(servers), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	l := n.Link(0, 0)
	raw, err := net.Dial("tcp", l.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte("SET held 1\r\nGET held\r\n"))
	raw.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if _, err := raw.Read(make([]byte, 16)); !isTimeout(err) {
		t.Errorf("read over a cut link: %v, want a timeout", err)
	}
	direct, err := redis.Dial("tcp", servers[0].Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if v, _ := redis.Int(direct.Do("EXISTS", "held")); v != 0 {
		t.Error("a write sent during the cut reached the node")
	}
	l.Heal()
	raw.SetReadDeadline(time.Now().Add(2 * time.Second))
	want := "+OK\r\n$1\r\n1\r\n"
	got := make([]byte, 0, len(want))
	for len(got) < len(want) {
		buf := make([]byte, 64)
		k, err := raw.Read(buf)
		if err != nil {
			t.Fatalf("after heal: %v (got %q)", err, got)
		}
		got = append(got, buf[:k]...)
	}
	if string(got) != want {
		t.Errorf("replies after heal %q, want %q", got, want)
	}
}
