package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

// onAll sends one command to every master of c.
func (c *cluster) onAll(t *testing.T, cmd string, args ...any) {
	t.Helper()
	for i := range c.servers {
		c.do(t, i, cmd, args...)
	}
}

// TestNotALock: an application's data under a lock's name (the key itself,
// or a key derived from it) is no lock for inspect, and unlock leaves it
// alone with status 65, both with --force and with a --token equal to its
// value.
func TestNotALock(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	const (
		tokenLike = "JBSWY3DPEHPK3PXPJBSWY3DPEH" // the library's format
		uuid      = "550e8400-e29b-41d4-a716-446655440000"
		jwt       = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
		url       = "https://cdn.example.com/assets/app-3f9a.js"
	)
	for _, tc := range []struct {
		name, key string
		setup     [][]any // on every master
		bad       string  // the key that is not a lock
		token     string  // a --token equal to the key's value, if any
		reason    string
	}{
		{"JSON without TTL", "user:42", [][]any{{"SET", "user:42", `{"name":"bob"}`}}, "user:42", `{"name":"bob"}`, "without a TTL"},
		{"short value with TTL", "cache:1", [][]any{{"SET", "cache:1", "bob", "PX", 60000}}, "cache:1", "bob", "not a lock token"},
		{"token without TTL", "sess:9", [][]any{{"SET", "sess:9", tokenLike}}, "sess:9", tokenLike, "without a TTL"},
		{"user hash", "user:43", [][]any{{"HSET", "user:43", "name", "bob"}}, "user:43", "", "hash without a TTL"},
		{"hash with owner but no hold", "acct:1", [][]any{{"HSET", "acct:1", "owner", "bob"}, {"PEXPIRE", "acct:1", 60000}}, "acct:1", "bob", "reentrant"},
		{"reentrant fields and more", "acct:2", [][]any{{"HSET", "acct:2", "owner", "bob", "h:" + tokenLike, "1", "email", "b@x"}, {"PEXPIRE", "acct:2", 60000}}, "acct:2", "bob", "fields other than"},
		{"list", "q:1", [][]any{{"RPUSH", "q:1", "a", "b"}, {"PEXPIRE", "q:1", 60000}}, "q:1", "", "a list"},
		{"set", "s:1", [][]any{{"SADD", "s:1", "a"}}, "s:1", "", "a set"},
		{"stream", "st:1", [][]any{{"XADD", "st:1", "*", "f", "v"}}, "st:1", "", "a stream"},
		{"readers without TTL", "rw:1", [][]any{{"ZADD", "{rw:1}:r", 1, tokenLike}}, "{rw:1}:r", tokenLike, "without a TTL"},
		// An application's cached values, with a TTL, under a lock's
		// names: none is a token of the library's format (26 characters
		// of base32), so none is lock state, wherever it sits.
		{"UUID with TTL", "cache:u", [][]any{{"SET", "cache:u", uuid, "PX", 60000}}, "cache:u", uuid, "not a lock token"},
		{"JWT with TTL", "sess:j", [][]any{{"SET", "sess:j", jwt, "PX", 60000}}, "sess:j", jwt, "not a lock token"},
		{"URL with TTL", "url:1", [][]any{{"SET", "url:1", url, "PX", 60000}}, "url:1", url, "not a lock token"},
		{"UUID as a writer", "doc:1", [][]any{{"SET", "{doc:1}:w", uuid, "PX", 60000}}, "{doc:1}:w", uuid, "not a lock token"},
		{"JWT as a permit", "sem:j", [][]any{{"SET", "{sem:j}:permit:0", jwt, "PX", 60000}}, "{sem:j}:permit:0", jwt, "not a lock token"},
		{"URL as a waiting writer", "doc:2", [][]any{{"SET", "{doc:2}:wq", url, "PX", 60000}}, "{doc:2}:wq", "", "not a lock token"},
		{"UUIDs as readers", "doc:3", [][]any{{"ZADD", "{doc:3}:r", 1 << 50, uuid}, {"PEXPIRE", "{doc:3}:r", 60000}}, "{doc:3}:r", uuid, "not a lock's"},
		{"UUID hold ids", "acct:3", [][]any{{"HSET", "acct:3", "owner", "bob", "h:" + uuid, "1"}, {"PEXPIRE", "acct:3", 60000}}, "acct:3", "bob", "fields other than"},
		// A holder record carries any fields a library user attached
		// (redlock.WithMetadata), up to redlock.MaxMetadataLen bytes.
		{"holder record too big", "acct:4", [][]any{{"HSET", "{acct:4}:holder", "token", tokenLike, "host", "h", "blob", strings.Repeat("x", redlock.MaxMetadataLen)}, {"PEXPIRE", "{acct:4}:holder", 60000}},
			"{acct:4}:holder", tokenLike, "too big for a holder record"},
		{"holder record without a token", "acct:5", [][]any{{"HSET", "{acct:5}:holder", "token", uuid, "host", "h"}, {"PEXPIRE", "{acct:5}:holder", 60000}},
			"{acct:5}:holder", uuid, "not a holder record"},
		{"the restart guard's record, by name", "app:{quorumlock}:guard", [][]any{{"SET", "app:{quorumlock}:guard", tokenLike, "PX", 60000}},
			"app:{quorumlock}:guard", tokenLike, "the restart guard's record"},
		{"a fencing counter, by name", "{f:1}:fence", [][]any{{"SET", "{f:1}:fence", "1764385696000000", "PX", 60000}}, "{f:1}:fence", "", "a fencing counter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range tc.setup {
				c.onAll(t, cmd[0].(string), cmd[1:]...)
			}
			rep := inspect(t, c, tc.key)
			if rep.Held || len(rep.Holders) != 0 || !rep.NotLock {
				t.Fatalf("inspect: %+v, want no holder and not_lock", rep)
			}
			for _, m := range rep.Masters {
				if len(m.NotLock) != 1 || m.NotLock[0].Key != tc.bad || !strings.Contains(m.NotLock[0].Reason, tc.reason) {
					t.Errorf("%s: not_lock %+v, want %s (%s)", m.Addr, m.NotLock, tc.bad, tc.reason)
				}
			}
			r := redlockRun(t, c.nodes, "inspect", tc.key)
			if !strings.Contains(r.stdout, tc.bad+" is not a lock on 3 of 3 masters") || strings.Contains(r.stdout, "(quorum)") {
				t.Errorf("inspect's text:\n%s", r.stdout)
			}
			r = redlockRun(t, c.nodes, "unlock", "--force", tc.key)
			if r.code != 65 || !strings.Contains(r.stdout, "LEFT ALONE "+tc.bad) {
				t.Errorf("unlock --force: status %d, output %q", r.code, r.stdout)
			}
			if tc.token != "" {
				r = redlockRun(t, c.nodes, "unlock", "--token", tc.token, tc.key)
				if r.code != 65 {
					t.Errorf("unlock --token: status %d, output %q", r.code, r.stdout)
				}
			}
			if n := c.exists(t, tc.bad); n != 3 {
				t.Fatalf("%s is left on %d of 3 masters", tc.bad, n)
			}
		})
	}
}

// TestForceTakesTheLockAndLeavesTheData: a lock beside data under a name
// derived from it: --force deletes the lock and leaves the data.
func TestForceTakesTheLockAndLeavesTheData(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{})
	if _, err := l.Lock(context.Background(), "mix", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c.onAll(t, "ZADD", "{mix}:r", 1, "member")
	r := redlockRun(t, c.nodes, "unlock", "--force", "--json", "mix")
	var rep unlockJSON
	decode(t, r.stdout, &rep)
	if r.code != 65 || rep.RemovedOn != 3 || !rep.Refused {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	for _, m := range rep.Masters {
		if strings.Join(m.Removed, " ") != "mix" || len(m.Refused) != 1 || m.Refused[0].Key != "{mix}:r" {
			t.Errorf("%s: removed %q, refused %+v", m.Addr, m.Removed, m.Refused)
		}
	}
	if c.exists(t, "mix") != 0 || c.exists(t, "{mix}:r") != 3 {
		t.Fatal("want the lock gone and the data left")
	}
}
