package nodetest

import (
	"strings"
	"testing"
)

// testAddr: Addr is not empty, stays the same across calls, and Nodes of
// different masters have different Addrs (a Locker needs them unique).
func (s *suite) testAddr(t *testing.T) {
	seen := map[string]int{}
	for i := range s.masters {
		n := s.node(t, i)
		a := n.Addr()
		if a == "" {
			t.Fatalf("master %d: empty Addr", i)
		}
		if _, err := n.Do(ctx(t), "PING"); err != nil {
			t.Fatalf("master %d: PING: %v", i, err)
		}
		if b := n.Addr(); b != a {
			t.Errorf("master %d: Addr changed from %q to %q", i, a, b)
		}
		if j, dup := seen[a]; dup {
			t.Errorf("masters %d and %d share Addr %q", j, i, a)
		}
		seen[a] = i
	}
}

// testReplies: the reply conventions of redlock.Node.Do. redlock needs a
// nil reply as untyped nil, a status reply as a string (SET's "OK" is how
// it tells a grant), an integer as int64; a bulk string may be []byte or
// string.
func (s *suite) testReplies(t *testing.T) {
	n, c, k := s.node(t, 0), s.control(t, 0), key(t)
	checks := []struct {
		cmd  string
		args []any
		want func(any) bool
		desc string
	}{
		{"GET", []any{k}, func(r any) bool { return r == nil }, "nil (untyped) for a missing key"},
		{"SET", []any{k, "token", "NX", "PX", 60000}, func(r any) bool { return r == "OK" }, `the string "OK" (a status reply)`},
		{"SET", []any{k, "other", "NX", "PX", 60000}, func(r any) bool { return r == nil }, "nil (untyped) for a refused SET NX"},
		{"GET", []any{k}, func(r any) bool { s, ok := text(r); return ok && s == "token" }, `"token" as []byte or string (a bulk reply)`},
		{"PEXPIRE", []any{k, 60000}, func(r any) bool { return r == int64(1) }, "int64(1) (an integer reply)"},
		{"INCR", []any{k + ":n"}, func(r any) bool { return r == int64(1) }, "int64(1) (an integer reply)"},
		{"PING", nil, func(r any) bool { return r == "PONG" }, `the string "PONG" (a status reply)`},
	}
	for _, ck := range checks {
		r, err := n.Do(ctx(t), ck.cmd, ck.args...)
		if err != nil {
			t.Fatalf("%s %v: %v", ck.cmd, ck.args, err)
		}
		if !ck.want(r) {
			t.Errorf("%s %v = %#v (%T), want %s", ck.cmd, ck.args, r, r, ck.desc)
		}
	}
	if got := c.str("GET", k); got != "token" {
		t.Errorf("the master holds %q under the key, want %q", got, "token")
	}
}

// testErrorReplies: a Redis error reply comes back as an error carrying
// the server's message, which is not a context error, and the Node stays
// usable: the next call gets its own reply, not the one before.
func (s *suite) testErrorReplies(t *testing.T) {
	n, k := s.node(t, 0), key(t)
	if _, err := n.Do(ctx(t), "SET", k, "v"); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, err := n.Do(ctx(t), "LPUSH", k, "x")
		wrongType(t, "LPUSH on a string", err)
		r, err := n.Do(ctx(t), "GET", k)
		if s, ok := text(r); err != nil || !ok || s != "v" {
			t.Fatalf("GET after an error reply = %#v, %v; want \"v\"", r, err)
		}
	}
	_, err := n.Do(ctx(t), "NOSUCHCOMMAND-REDLOCKTEST")
	if err == nil || isCtxErr(err) || !strings.Contains(err.Error(), "ERR") {
		t.Errorf("an unknown command: err = %v, want the server's ERR reply", err)
	}
	if r, err := n.Do(ctx(t), "PING"); err != nil || r != "PONG" {
		t.Errorf("PING after an error reply = %#v, %v", r, err)
	}
}

// wrongType checks that err is the server's WRONGTYPE error reply.
func wrongType(t *testing.T, what string, err error) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s: no error, want the WRONGTYPE error reply", what)
	case isCtxErr(err):
		t.Fatalf("%s: %v is a context error, want the WRONGTYPE error reply", what, err)
	case !strings.Contains(err.Error(), "WRONGTYPE"):
		t.Fatalf("%s: %v, want the WRONGTYPE error reply", what, err)
	}
}
