package main_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

type doctorJSON struct {
	Quorum, Answering, Tolerates int
	MoreMayFail                  int `json:"more_may_fail"`
	Guarantees                   map[string]int
	OK                           bool
	Masters                      []struct {
		Addr, Server, Version, Role, Appendonly, Appendfsync, Waitaof, Guarantee string
		Answers                                                                  bool
		Policy                                                                   string `json:"maxmemory_policy"`
		Problems, Unknown                                                        []struct{ Check, Detail string }
	}
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
	if m := rep.Masters[0]; m.Server != "valkey" || !strings.HasPrefix(m.Version, "8.") || m.Waitaof != "yes" || m.Guarantee != "durable by WAITAOF" {
		t.Errorf("valkey: %+v", m)
	}
	if m := rep.Masters[1]; m.Server != "redis" || !strings.HasPrefix(m.Version, "7.0") || m.Waitaof != "no" || m.Guarantee != "restart guard only" {
		t.Errorf("redis 7.0: %+v", m)
	}
	if m := rep.Masters[2]; m.Role != "slave" || m.Guarantee != "none" {
		t.Errorf("replica: %+v", m)
	}
}
