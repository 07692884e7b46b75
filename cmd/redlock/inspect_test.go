package main_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

type holderJSON struct {
	Kind, Token string
	Permit      *int
	Masters     []string
	Quorum      bool
	Record      *recordJSON
	Keys        []string
}

type recordJSON struct {
	Token, Host, Command, Started, Note string
	PID                                 int   `json:"pid"`
	CommandPID                          int   `json:"command_pid"`
	TTLMs                               int64 `json:"ttl_ms"`
	Matches                             bool
	Metadata                            map[string]string
}

type waiterJSON struct {
	ID      string
	Ticket  int64
	TTLMs   int64 `json:"ttl_ms"`
	Masters []string
	Quorum  bool
}

type inspectJSON struct {
	Key     string
	Prefix  string
	Quorum  int
	Held    bool
	NotLock bool `json:"not_lock"`
	Holders []holderJSON
	Waiters []waiterJSON
	Masters []struct {
		Addr, Type, Error string
		Lock              *struct {
			Token string
			TTLMs int64 `json:"ttl_ms"`
		}
		Reentrant *struct {
			Owners map[string]int64
			TTLMs  int64 `json:"ttl_ms"`
		}
		Writer  *struct{ Token string }
		Readers []struct {
			Token string
			TTLMs int64 `json:"ttl_ms"`
		}
		Fence   *int64
		Permits []struct {
			Permit int
			Token  string
			TTLMs  int64 `json:"ttl_ms"`
		}
		FairQueue []struct {
			ID     string
			Ticket int64
			TTLMs  int64 `json:"ttl_ms"`
		} `json:"fair_queue"`
		PermitsNotScanned string `json:"permits_not_scanned"`
		Holder            *recordJSON
		NotLock           []struct{ Key, Reason string } `json:"not_lock"`
		RunID             string                         `json:"run_id"`
		Guard             *guardJSON
		GuardError        string `json:"guard_error"`
	}
}

type guardJSON struct {
	Run, Fsync string
	TTLMs      int64 `json:"ttl_ms"`
	Registered bool
}

// inspect runs "redlock inspect --json" with args (KEY and flags) and
// returns its report.
func inspect(t *testing.T, c *cluster, args ...string) inspectJSON {
	t.Helper()
	r := redlockRun(t, c.nodes, append([]string{"inspect", "--json"}, args...)...)
	if r.code != 0 {
		t.Fatalf("inspect %s: status %d, stderr %q", args, r.code, r.stderr)
	}
	var rep inspectJSON
	decode(t, r.stdout, &rep)
	return rep
}

func TestInspect(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	l := c.locker(t, redlock.Config{Fencing: true})

	plain, err := l.Lock(ctx, "plain", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep := inspect(t, c, "plain")
	if !rep.Held || len(rep.Holders) != 1 || rep.Holders[0].Kind != "lock" || rep.Holders[0].Token != plain.Token() || !rep.Holders[0].Quorum || len(rep.Holders[0].Masters) != 3 {
		t.Fatalf("plain lock: %+v", rep)
	}
	fenced := 0 // masters whose counter the grant raised to the lock's token
	for _, m := range rep.Masters {
		if m.Type != "string" || m.Lock == nil || m.Lock.Token != plain.Token() || m.Lock.TTLMs <= 0 || m.Lock.TTLMs > 10000 || m.Fence == nil {
			t.Fatalf("plain lock on %s: %+v", m.Addr, m)
		}
		if *m.Fence >= plain.Fence() {
			fenced++
		}
	}
	// The token is the highest counter of the quorum that decided, written
	// back to that quorum; a master that answered later may keep a lower
	// counter (each seeds its own from its clock).
	if fenced < rep.Quorum {
		t.Fatalf("fencing counters: %d masters at or above the token %d, want a quorum", fenced, plain.Fence())
	}
	if r := redlockRun(t, c.nodes, "inspect", "plain"); !strings.Contains(r.stdout, "lock "+plain.Token()+" on 3 of 3 masters (quorum)") {
		t.Errorf("text output:\n%s", r.stdout)
	}

	for range 2 {
		if _, err := l.Reentrant("re", "job-7").Lock(ctx, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	rep = inspect(t, c, "re")
	if !rep.Held || len(rep.Holders) != 1 || rep.Holders[0].Kind != "reentrant" || rep.Holders[0].Token != "job-7" {
		t.Fatalf("reentrant: %+v", rep)
	}
	for _, m := range rep.Masters {
		if m.Type != "hash" || m.Reentrant == nil || m.Reentrant.Owners["job-7"] != 2 {
			t.Fatalf("reentrant on %s: %+v", m.Addr, m)
		}
	}

	rw := l.RWMutex("rw")
	r1, err := rw.RLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := rw.RLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep = inspect(t, c, "rw")
	if rep.Held || len(rep.Holders) != 2 {
		t.Fatalf("two readers: %+v", rep)
	}
	for _, m := range rep.Masters {
		if len(m.Readers) != 2 || m.Writer != nil || m.Type != "none" {
			t.Fatalf("readers on %s: %+v", m.Addr, m)
		}
	}
	r1.Unlock(ctx)
	r2.Unlock(ctx)
	w, err := rw.Lock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep = inspect(t, c, "rw")
	if !rep.Held || len(rep.Holders) != 1 || rep.Holders[0].Kind != "writer" || rep.Holders[0].Token != w.Token() {
		t.Fatalf("writer: %+v", rep)
	}

	rep = inspect(t, c, "free")
	if rep.Held || len(rep.Holders) != 0 {
		t.Fatalf("free key: %+v", rep)
	}
}

func TestInspectSeesAHolderWithoutQuorum(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	c.do(t, 0, "SET", "k", "JBSWY3DPEHPK3PXPJBSWY3DPEH", "PX", 10000)
	rep := inspect(t, c, "k")
	if rep.Held || len(rep.Holders) != 1 || rep.Holders[0].Quorum || len(rep.Holders[0].Masters) != 1 {
		t.Fatalf("a token on one master of three: %+v", rep)
	}
}

// TestInspectShowsTheGuardsRecord: beside the lock's state, inspect shows
// each master's restart-guard record (the run registered, its
// persistence, the longest TTL) and whether it names the master's running
// process: a master that restarted empty has none, one whose record names
// an earlier run is said to have restarted since.
func TestInspectShowsTheGuardsRecord(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	lk, err := c.locker(t, redlock.Config{KeyPrefix: "app:"}).Lock(ctx, "k", 7*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	rep := inspect(t, c, "--prefix", "app:", "k")
	if !rep.Held || rep.Holders[0].Token != lk.Token() {
		t.Fatalf("%+v", rep)
	}
	for _, m := range rep.Masters {
		if g := m.Guard; g == nil || g.Run == "" || g.Run != m.RunID || !g.Registered || g.Fsync != "other" || g.TTLMs != 7000 || m.GuardError != "" {
			t.Errorf("%s: run id %q, record %+v (%s)", m.Addr, m.RunID, m.Guard, m.GuardError)
		}
	}
	if rep := inspect(t, c, "k"); rep.Masters[0].Guard != nil {
		t.Errorf("without the prefix: %+v", rep.Masters[0].Guard)
	}
	first := rep.Masters[0].Guard.Run
	restartEmpty(t, c.servers[:1])
	c.do(t, 1, "HSET", "app:{quorumlock}:guard", "run", first)
	rep = inspect(t, c, "--prefix", "app:", "k")
	if m := rep.Masters[0]; m.Guard != nil || m.RunID == "" || m.RunID == first {
		t.Errorf("restarted empty: run id %q, record %+v", m.RunID, m.Guard)
	}
	if m := rep.Masters[1]; m.Guard == nil || m.Guard.Registered || m.Guard.Run != first {
		t.Errorf("a record naming another run: %+v", m.Guard)
	}
	text := redlockRun(t, c.nodes, "inspect", "--prefix", "app:", "k").stdout
	for _, want := range []string{
		"restart guard's record: none",
		"restart guard's record: run " + first + ", not the running process " + rep.Masters[1].RunID + " (restarted since it was registered), fsync other, longest TTL 7s",
		"restart guard's record: run " + rep.Masters[2].RunID + " (the running process), fsync other, longest TTL 7s",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text, want %q:\n%s", want, text)
		}
	}
}
