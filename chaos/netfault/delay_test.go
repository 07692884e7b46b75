package netfault_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// lateBy is the delay of these tests: far longer than anything else they
// wait for, so that what they order by it is ordered on any machine.
const lateBy = 2 * time.Second

// awaitValue polls the node directly until key holds want, and returns
// the values it saw on the way (chaostest.AwaitValue).
func awaitValue(t *testing.T, addr, key, want string) []string {
	t.Helper()
	return chaostest.AwaitValue(t, want, func() string {
		v, _ := redis.String(direct(t, addr, "GET", key), nil)
		return v
	})
}

func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes req on c and reads one reply line, within timeout.
func roundTrip(c net.Conn, req string, timeout time.Duration) (string, error) {
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	c.SetReadDeadline(time.Now().Add(timeout))
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return strings.TrimSpace(string(buf[:n])), err
}

// TestDelayRequestsOutlastAReconnect: the requests of the open connection
// are delayed; the client gives up on it, closes it, and reaches the node
// again over a new connection, which is not delayed. The new connection's
// command lands first, and the old one's still lands, late, after it.
func TestDelayRequestsOutlastAReconnect(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	old := dialRaw(t, l.Addr())
	if r, err := roundTrip(old, "PING\r\n", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("PING before the delay: %q, %v", r, err)
	}
	if n, err := l.Delay(netfault.Requests, lateBy); err != nil || n != 1 {
		t.Fatalf("Delay = %d, %v; want 1 connection delayed", n, err)
	}
	if _, err := old.Write([]byte("SET k late\r\n")); err != nil {
		t.Fatal(err)
	}
	old.Close() // the client gives up on it (a stall timeout)

	fresh := dialRaw(t, l.Addr())
	if r, err := roundTrip(fresh, "SET k early\r\n", 5*time.Second); err != nil || r != "+OK" {
		t.Fatalf("SET over a new connection: %q, %v", r, err)
	}
	seen := awaitValue(t, s.Addr(), "k", "late")
	if len(seen) < 2 || seen[len(seen)-2] != "early" {
		t.Errorf("values of k: %v; want the new connection's SET first, then the old one's, late", seen)
	}
	if st := l.Stats(); st.Accepted != 2 || st.Resets != 0 {
		t.Errorf("Stats() = %+v", st)
	}
}

// TestDelayReplies: the node runs the command at once, the reply comes
// late on the same connection, after the client's read timed out; a new
// connection is not delayed.
func TestDelayReplies(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	c := dialRaw(t, l.Addr())
	if r, err := roundTrip(c, "PING\r\n", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("PING before the delay: %q, %v", r, err)
	}
	if _, err := l.Delay(netfault.Replies, lateBy); err != nil {
		t.Fatal(err)
	}
	if _, err := roundTrip(c, "INCR n\r\n", 100*time.Millisecond); !isTimeout(err) {
		t.Fatalf("INCR over a link whose replies are late: %v, want a timeout", err)
	}
	awaitValue(t, s.Addr(), "n", "1") // it ran, the reply is on its way
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	if n, err := c.Read(buf); err != nil || strings.TrimSpace(string(buf[:n])) != ":1" {
		t.Errorf("the late reply: %q, %v; want :1", buf[:n], err)
	}
	fresh := dialRaw(t, l.Addr())
	if r, err := roundTrip(fresh, "INCR n\r\n", 5*time.Second); err != nil || r != ":2" {
		t.Errorf("INCR over a new connection: %q, %v", r, err)
	}
}

// TestDelayNextConnection: Delay on a link without a connection delays
// the next one accepted, and only that one; Heal ends the delay of the
// bytes read after it.
func TestDelayNextConnection(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	if n, err := l.Delay(netfault.Requests, lateBy); err != nil || n != 0 {
		t.Fatalf("Delay = %d, %v; want 0 connections (the next one)", n, err)
	}
	first := dialRaw(t, l.Addr())
	if _, err := first.Write([]byte("SET k first\r\n")); err != nil {
		t.Fatal(err)
	}
	for l.Stats().Accepted < 1 { // the link has taken the delay for it
		time.Sleep(time.Millisecond)
	}
	second := dialRaw(t, l.Addr())
	if r, err := roundTrip(second, "SET k second\r\n", 5*time.Second); err != nil || r != "+OK" {
		t.Fatalf("SET over the second connection: %q, %v", r, err)
	}
	if seen := awaitValue(t, s.Addr(), "k", "first"); seen[0] != "second" {
		t.Errorf("values of k: %v; want the second connection's first", seen)
	}
	l.Heal()
	if _, err := first.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	// The late SET's reply, then the PING's.
	first.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []byte
	buf := make([]byte, 64)
	for !strings.Contains(string(got), "+PONG") {
		n, err := first.Read(buf)
		if err != nil {
			t.Fatalf("the first connection after Heal: %q, %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != "+OK\r\n+PONG\r\n" {
		t.Errorf("the first connection's replies: %q", got)
	}
}

func TestDelayRefusesBadArguments(t *testing.T) {
	l, _ := oneLink(t, redisproc.Options{})
	if _, err := l.Delay(netfault.Replies, -time.Second); err == nil {
		t.Error("a negative delay: nil error")
	}
	if _, err := l.Delay(netfault.Direction(7), time.Second); err == nil {
		t.Error("no such direction: nil error")
	}
	if netfault.Requests.String() != "requests" || netfault.Replies.String() != "replies" {
		t.Error("Direction.String")
	}
}

// awaitDelivered polls l until m is delivered, for up to 10s.
func awaitDelivered(t *testing.T, l *netfault.Link, m netfault.Mark) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !l.Delivered(m); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("requests still in flight after 10s")
		}
	}
}

// TestSentDelivered: a mark taken while a request is delayed is
// delivered only once the request reached the node; one taken while a
// request is held by a cut is delivered once a reset dropped it.
func TestSentDelivered(t *testing.T) {
	l, s := oneLink(t, redisproc.Options{})
	c := dialRaw(t, l.Addr())
	if r, err := roundTrip(c, "PING\r\n", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("PING: %q, %v", r, err)
	}
	if !l.Delivered(l.Sent()) {
		t.Fatal("an idle link has requests in flight")
	}
	if _, err := l.Delay(netfault.Requests, lateBy); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("SET k v\r\n")); err != nil {
		t.Fatal(err)
	}
	var m netfault.Mark
	for m = l.Sent(); l.Delivered(m); m = l.Sent() { // until the proxy read it
		time.Sleep(time.Millisecond)
	}
	awaitDelivered(t, l, m)
	if v, _ := redis.String(direct(t, s.Addr(), "GET", "k"), nil); v != "v" {
		t.Errorf("k = %q once the SET was delivered", v)
	}

	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte("SET k held\r\n")); err != nil {
		t.Fatal(err)
	}
	for m = l.Sent(); l.Delivered(m); m = l.Sent() {
		time.Sleep(time.Millisecond)
	}
	if l.Reset() != 1 {
		t.Fatal("no connection to reset")
	}
	awaitDelivered(t, l, m) // dropped with its connection
	l.Heal()
	if v, _ := redis.String(direct(t, s.Addr(), "GET", "k"), nil); v != "v" {
		t.Errorf("k = %q: a request dropped by the reset reached the node", v)
	}
}

// TestLateUntil checks that a link knows how late the bytes it read are
// due: now-ish on a healthy link, the delay later on a delayed one.
func TestLateUntil(t *testing.T) {
	l, _ := oneLink(t, redisproc.Options{})
	c := dialRaw(t, l.Addr())
	before := time.Now()
	if r, err := roundTrip(c, "PING\r\n", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("PING: %q, %v", r, err)
	}
	if u := l.LateUntil(); u.Before(before) || u.After(time.Now()) {
		t.Errorf("LateUntil %v after a PING on a healthy link, want between %v and now", u, before)
	}
	if _, err := l.Delay(netfault.Replies, lateBy); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	// The proxy reads the reply within a round trip; then the link knows
	// it is due lateBy after that.
	for deadline := time.Now().Add(10 * time.Second); !l.LateUntil().After(sent.Add(lateBy)); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("LateUntil %v after sending a PING whose reply is delayed by %v", l.LateUntil().Sub(sent), lateBy)
		}
	}
}

// TestHeldAt checks that a link knows when it held bytes back: never on a
// healthy link; while a cut holds a request, and at every moment from its
// reading to its delivery once healed, but not after.
func TestHeldAt(t *testing.T) {
	l, _ := oneLink(t, redisproc.Options{})
	c := dialRaw(t, l.Addr())
	if r, err := roundTrip(c, "PING\r\n", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("PING: %q, %v", r, err)
	}
	if l.HeldAt(time.Now()) {
		t.Error("a healthy link held a PING back")
	}
	if err := l.Cut(); err != nil {
		t.Fatal(err)
	}
	sent := time.Now()
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !l.HeldAt(time.Now()); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a cut link does not hold the PING it read")
		}
	}
	during := time.Now()
	l.Heal()
	if r, err := roundTrip(c, "", 5*time.Second); err != nil || r != "+PONG" {
		t.Fatalf("the held PING: %q, %v", r, err)
	}
	after := time.Now()
	if !l.HeldAt(during) {
		t.Error("HeldAt: false for a moment the cut held the PING")
	}
	if l.HeldAt(sent.Add(-time.Millisecond)) || l.HeldAt(after) {
		t.Error("HeldAt: true before the PING was sent or after its reply came")
	}
}
