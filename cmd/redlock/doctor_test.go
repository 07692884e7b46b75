package main_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
)

type doctorJSON struct {
	Quorum, Answering, Tolerates int
	MoreMayFail                  int `json:"more_may_fail"`
	Guarantees                   map[string]int
	OK                           bool
	Prefix                       string
	GuardRecords                 int   `json:"guard_records"`
	GuardLongestTTLMs            int64 `json:"guard_longest_ttl_ms"`
	GuardHeldBack                int   `json:"guard_held_back"`
	Masters                      []doctorMasterJSON
}

type doctorMasterJSON struct {
	Addr, Server, Version, Role, Appendonly, Appendfsync, Waitaof, Guarantee string
	Answers                                                                  bool
	Policy                                                                   string `json:"maxmemory_policy"`
	Problems, Unknown                                                        []struct{ Check, Detail string }

	GuaranteeDetail      string `json:"guarantee_detail"`
	Identity             string
	IdentityDetail       string   `json:"identity_detail"`
	MissingPermissions   []string `json:"missing_permissions"`
	RunID                string   `json:"run_id"`
	UptimeS              int64    `json:"uptime_s"`
	Guard                *guardJSON
	GuardError           string `json:"guard_error"`
	GuardVerdict         string `json:"guard_verdict"`
	GuardHeldBackMs      int64  `json:"guard_held_back_ms"`
	GuardDetail          string `json:"guard_detail"`
	RestartGuard         string `json:"restart_guard"`
	DurableConfirmations string `json:"durable_confirmations"`
	DurableDetail        string `json:"durable_detail"`
	Enforces             string
}

// has reports whether m has a problem of check whose detail holds detail.
func (m doctorMasterJSON) has(check, detail string) bool {
	for _, p := range m.Problems {
		if p.Check == check && strings.Contains(p.Detail, detail) {
			return true
		}
	}
	return false
}

// doctor runs "redlock doctor --json" and returns its status and report.
func doctor(t *testing.T, c *cluster, nodes string) (int, doctorJSON) {
	t.Helper()
	if nodes == "" {
		nodes = c.nodes
	}
	r := redlockRun(t, nodes, "doctor", "--json")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	return r.code, rep
}

func TestDoctorFlagsAMasterWithoutAOF(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	r := redlockRun(t, c.nodes, "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "AOF is off") || !strings.Contains(r.stdout, "NOT SAFE") {
		t.Fatalf("status %d, output:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, ": redis 7.") || !strings.Contains(r.stdout, "guarantee: restart guard only: AOF is off") ||
		!strings.Contains(r.stdout, "the set tolerates 1 failed master(s) of 3 (quorum 2); 3 answer, so 1 more may fail") {
		t.Errorf("text:\n%s", r.stdout)
	}
	code, rep := doctor(t, c, "")
	if code != 1 || rep.OK || rep.Answering != 3 || len(rep.Masters) != 3 || rep.Tolerates != 1 || rep.MoreMayFail != 1 || rep.Guarantees["restart guard only"] != 3 {
		t.Fatalf("status %d, %+v", code, rep)
	}
	for _, m := range rep.Masters {
		if m.Appendonly != "no" || len(m.Problems) != 1 || m.Problems[0].Check != "persistence" || m.Server != "redis" || m.Guarantee != "restart guard only" {
			t.Errorf("master %s: %+v, want one persistence problem", m.Addr, m)
		}
	}
}

func TestDoctorPassesSafeMasters(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{AppendOnly: true, Args: []string{"--maxmemory-policy", "noeviction"}})
	code, rep := doctor(t, c, "")
	if code != 0 || !rep.OK || rep.Guarantees["durable by configuration"] != 3 {
		t.Fatalf("status %d, %+v", code, rep)
	}
	for _, m := range rep.Masters {
		if !m.Answers || m.Appendonly != "yes" || m.Appendfsync != "always" || m.Policy != "noeviction" || m.Role != "master" || m.Version == "" || len(m.Problems) != 0 ||
			m.Guarantee != "durable by configuration" {
			t.Errorf("master %+v", m)
		}
	}
}

func TestDoctorFindsEvictionAndDeadMasters(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{AppendOnly: true, Args: []string{"--maxmemory-policy", "volatile-lru"}})
	c.servers[2].Kill()
	code, rep := doctor(t, c, "")
	if code != 1 || rep.OK || rep.Answering != 2 || rep.MoreMayFail != 0 || rep.Tolerates != 1 || rep.Guarantees["none"] != 2 || rep.Guarantees["unknown"] != 1 {
		t.Fatalf("status %d, %+v", code, rep)
	}
	if m := rep.Masters[0]; len(m.Problems) != 1 || m.Problems[0].Check != "eviction" || m.Guarantee != "none" {
		t.Errorf("evicting master: %+v", m)
	}
	if p := rep.Masters[2].Problems; rep.Masters[2].Answers || len(p) != 1 || p[0].Check != "unreachable" || rep.Masters[2].Guarantee != "unknown" {
		t.Errorf("dead master: %+v", rep.Masters[2])
	}
	c.servers[1].Kill()
	if r := redlockRun(t, c.nodes, "doctor"); r.code != 69 || !strings.Contains(r.stderr, "quorum") {
		t.Errorf("two of three dead: status %d, stderr %q", r.code, r.stderr)
	}
}

func TestDoctorSaysUnknownWhenCONFIGIsRenamed(t *testing.T) {
	c := startCluster(t, 1, redisproc.Options{AppendOnly: true, Args: []string{"--rename-command", "CONFIG", ""}})
	code, rep := doctor(t, c, "")
	m := rep.Masters[0]
	// appendonly and maxmemory-policy still come from INFO; appendfsync
	// only CONFIG tells, and without it no guarantee can be named.
	if code != 0 || m.Appendonly != "yes" || m.Policy != "noeviction" || m.Appendfsync != "unknown" || len(m.Unknown) == 0 || m.Guarantee != "unknown" {
		t.Fatalf("status %d, %+v", code, m)
	}
}

// TestDoctorNamesTheServerAndItsGuarantee: Valkey with WAITAOF beside a
// Redis 7.0 without it, both with appendfsync everysec; and a replica.
func TestDoctorNamesTheServerAndItsGuarantee(t *testing.T) {
	if _, err := exec.LookPath("valkey-server"); err != nil {
		t.Skip("no valkey-server on PATH")
	}
	everysec := []string{"--appendfsync", "everysec"}
	valkey := startCluster(t, 1, redisproc.Options{Binary: "valkey-server", AppendOnly: true, Args: everysec})
	redis := startCluster(t, 3, redisproc.Options{AppendOnly: true, Args: everysec})
	redis.do(t, 2, "REPLICAOF", "127.0.0.1", redis.servers[1].Port()) // a replica of a master outside the set
	code, rep := doctor(t, nil, strings.Join([]string{valkey.nodes, redis.servers[0].Addr(), redis.servers[2].Addr()}, ","))
	if code != 1 || rep.Tolerates != 1 || rep.Guarantees["durable by WAITAOF"] != 1 || rep.Guarantees["restart guard only"] != 1 || rep.Guarantees["none"] != 1 {
		t.Fatalf("status %d, %+v", code, rep)
	}
	if m := rep.Masters[0]; m.Server != "valkey" || !strings.HasPrefix(m.Version, "8.") || m.Waitaof != "yes" || m.Guarantee != "durable by WAITAOF" ||
		m.DurableConfirmations != "yes" || !strings.Contains(m.DurableDetail, "appendfsync everysec") {
		t.Errorf("valkey: %+v", m)
	}
	if m := rep.Masters[1]; m.Server != "redis" || !strings.HasPrefix(m.Version, "7.0") || m.Waitaof != "no" || m.Guarantee != "restart guard only" ||
		m.DurableConfirmations != "no" || !strings.Contains(m.DurableDetail, "has no WAITAOF") {
		t.Errorf("redis 7.0: %+v", m)
	}
	if m := rep.Masters[2]; m.Role != "slave" || m.Guarantee != "none" {
		t.Errorf("replica: %+v", m)
	}
}

// TestDoctorRatesAppendfsyncNoAsNotDurable: AOF with appendfsync no is
// never fsynced by the server, so WAITAOF confirms nothing: restart guard
// only, a persistence problem, and no durable confirmations, on a server
// with WAITAOF (Valkey) and without (Redis 7.0). (4e95571 rated it
// durable by WAITAOF on Valkey.)
func TestDoctorRatesAppendfsyncNoAsNotDurable(t *testing.T) {
	opts := redisproc.Options{AppendOnly: true, Args: []string{"--appendfsync", "no"}}
	var nodes []string
	for _, bin := range []string{"redis-server", "valkey-server"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Logf("no %s on PATH", bin)
			continue
		}
		opts.Binary = bin
		nodes = append(nodes, startCluster(t, 1, opts).nodes)
	}
	code, rep := doctor(t, nil, strings.Join(nodes, ","))
	if code != 1 || rep.Guarantees["durable by WAITAOF"] != 0 {
		t.Fatalf("status %d, %+v", code, rep)
	}
	for _, m := range rep.Masters {
		if m.Appendfsync != "no" || m.Guarantee != "restart guard only" || !strings.Contains(m.GuaranteeDetail, "never fsyncs") ||
			!m.has("persistence", "appendfsync is no") || m.DurableConfirmations != "no" || !strings.Contains(m.DurableDetail, "never fsynced") {
			t.Errorf("%s (%s): %+v", m.Addr, m.Server, m)
		}
	}
}

// TestDoctorSaysWhatTheClientEnforces: per master, the process this
// client reads (run id, uptime), the restart guard's record and what
// clients make of it (registered, or held back after a restart, for how
// long), and what the library enforces through this command's client.
func TestDoctorSaysWhatTheClientEnforces(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	lk, err := c.locker(t, redlock.Config{KeyPrefix: "app:"}).Lock(context.Background(), "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lk.Unlock(context.Background())
	restartEmpty(t, c.servers[:1])
	r := redlockRun(t, c.nodes, "doctor", "--json", "--prefix", "app:")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	if r.code != 1 || rep.Prefix != "app:" || rep.GuardRecords != 2 || rep.GuardLongestTTLMs != 5000 || rep.GuardHeldBack != 1 {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	for i, m := range rep.Masters {
		if m.Identity != "read" || m.RunID == "" || m.UptimeS < 0 || len(m.MissingPermissions) != 0 || m.has("identity", "") ||
			m.RestartGuard != "applies" || m.DurableConfirmations != "no" || !strings.Contains(m.DurableDetail, "AOF is off") ||
			!strings.Contains(m.Enforces, "restart guard: applies") {
			t.Errorf("master %d: %+v", i, m)
		}
		if i == 0 {
			if m.Guard != nil || m.GuardVerdict != "held back" || m.GuardHeldBackMs <= 0 || m.GuardHeldBackMs > 7000 || !strings.Contains(m.GuardDetail, "lost its data") {
				t.Errorf("the restarted master: %+v", m)
			}
		} else if g := m.Guard; g == nil || g.Run != m.RunID || !g.Registered || g.TTLMs != 5000 || g.Fsync != "other" || m.GuardVerdict != "registered" || m.GuardHeldBackMs != 0 {
			t.Errorf("master %d: record %+v, verdict %q", i, g, m.GuardVerdict)
		}
	}
	text := redlockRun(t, c.nodes, "doctor", "--prefix", "app:").stdout
	for _, want := range []string{
		"identity: read on every new connection: run id " + rep.Masters[1].RunID,
		"restart guard's record: none",
		"restart guard: held back: it has no record while other masters have one",
		"restart guard's record: run " + rep.Masters[2].RunID + " (the running process), fsync other, longest TTL 5s",
		"restart guard: registered",
		"this client (pool.Node) enforces: restart guard: applies",
		"restart guard: records on 2 of 3 masters (prefix \"app:\"), longest TTL recorded 5s; 1 held back now",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text, want %q:\n%s", want, text)
		}
	}
	if _, rep := doctor(t, c, ""); rep.GuardRecords != 0 || rep.Masters[1].GuardVerdict != "fresh deployment" {
		t.Errorf("without the prefix: %+v", rep)
	}
}

// TestDoctorNamesTheMissingPermission: a user whose ACL lacks INFO cannot
// let the restart guard read the master's process (doctor fails, naming
// +info, and the guard cannot apply); one that lacks CONFIG GET counts as
// not persisting every write (+config|get named, no failure).
func TestDoctorNamesTheMissingPermission(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	var noinfo, noconf []string
	for i, s := range c.servers {
		c.do(t, i, "ACL", "SETUSER", "noinfo", "on", ">pw", "~*", "&*", "+@all", "-info")
		c.do(t, i, "ACL", "SETUSER", "noconf", "on", ">pw", "~*", "&*", "+@all", "-config|get")
		noinfo = append(noinfo, "redis://noinfo:pw@"+s.Addr())
		noconf = append(noconf, "redis://noconf:pw@"+s.Addr())
	}
	code, rep := doctor(t, c, strings.Join(noinfo, ","))
	if code != 1 || rep.OK {
		t.Fatalf("without INFO: status %d, %+v", code, rep)
	}
	for _, m := range rep.Masters {
		if m.Identity != "refused" || len(m.MissingPermissions) != 1 || m.MissingPermissions[0] != "+info" || !m.has("identity", "lacks +info") ||
			m.RestartGuard != "cannot apply" || m.RunID != "" || !strings.Contains(m.Enforces, "CANNOT APPLY") {
			t.Errorf("without INFO: %+v", m)
		}
	}
	if r := redlockRun(t, strings.Join(noinfo, ","), "doctor"); !strings.Contains(r.stdout, "UNSAFE (identity): the master's process cannot be read: the ACL of user noinfo lacks +info (ACL SETUSER noinfo +info)") {
		t.Errorf("text:\n%s", r.stdout)
	}
	code, rep = doctor(t, c, strings.Join(noconf, ","))
	for _, m := range rep.Masters {
		if m.Identity != "read" || len(m.MissingPermissions) != 1 || m.MissingPermissions[0] != "+config|get" ||
			!strings.Contains(m.IdentityDetail, "not persisting every write") || m.has("identity", "") || m.RestartGuard != "applies" {
			t.Errorf("without CONFIG GET: status %d, %+v", code, m)
		}
	}
}
