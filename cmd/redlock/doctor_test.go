package main_test

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

type doctorJSON struct {
	Quorum, Answering int
	OK                bool
	Masters           []struct {
		Addr, Version, Role, Appendonly, Appendfsync string
		Answers                                      bool
		Policy                                       string `json:"maxmemory_policy"`
		Problems, Unknown                            []struct{ Check, Detail string }
	}
}

func TestDoctorFlagsAMasterWithoutAOF(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	r := redlockRun(t, c.nodes, "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "AOF is off") || !strings.Contains(r.stdout, "NOT SAFE") {
		t.Fatalf("status %d, output:\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = redlockRun(t, c.nodes, "doctor", "--json")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	if r.code != 1 || rep.OK || rep.Answering != 3 || len(rep.Masters) != 3 {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	for _, m := range rep.Masters {
		if m.Appendonly != "no" || len(m.Problems) != 1 || m.Problems[0].Check != "persistence" {
			t.Errorf("master %s: %+v, want one persistence problem", m.Addr, m)
		}
	}
}

func TestDoctorPassesSafeMasters(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{AppendOnly: true, Args: []string{"--maxmemory-policy", "noeviction"}})
	r := redlockRun(t, c.nodes, "doctor", "--json")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	if r.code != 0 || !rep.OK {
		t.Fatalf("status %d, %+v (stderr %q)", r.code, rep, r.stderr)
	}
	for _, m := range rep.Masters {
		if !m.Answers || m.Appendonly != "yes" || m.Appendfsync != "always" || m.Policy != "noeviction" || m.Role != "master" || m.Version == "" || len(m.Problems) != 0 {
			t.Errorf("master %+v", m)
		}
	}
}

func TestDoctorFindsEvictionAndDeadMasters(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{AppendOnly: true, Args: []string{"--maxmemory-policy", "volatile-lru"}})
	c.servers[2].Kill()
	r := redlockRun(t, c.nodes, "doctor", "--json")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	if r.code != 1 || rep.OK || rep.Answering != 2 {
		t.Fatalf("status %d, %+v", r.code, rep)
	}
	if p := rep.Masters[0].Problems; len(p) != 1 || p[0].Check != "eviction" {
		t.Errorf("evicting master: problems %+v", p)
	}
	if p := rep.Masters[2].Problems; rep.Masters[2].Answers || len(p) != 1 || p[0].Check != "unreachable" {
		t.Errorf("dead master: %+v", rep.Masters[2])
	}
	c.servers[1].Kill()
	if r := redlockRun(t, c.nodes, "doctor"); r.code != 69 || !strings.Contains(r.stderr, "quorum") {
		t.Errorf("two of three dead: status %d, stderr %q", r.code, r.stderr)
	}
}

func TestDoctorSaysUnknownWhenCONFIGIsRenamed(t *testing.T) {
	c := startCluster(t, 1, redisproc.Options{AppendOnly: true, Args: []string{"--rename-command", "CONFIG", ""}})
	r := redlockRun(t, c.nodes, "doctor", "--json")
	var rep doctorJSON
	decode(t, r.stdout, &rep)
	m := rep.Masters[0]
	// appendonly and maxmemory-policy still come from INFO; appendfsync
	// only CONFIG tells.
	if r.code != 0 || m.Appendonly != "yes" || m.Policy != "noeviction" || m.Appendfsync != "unknown" || len(m.Unknown) == 0 {
		t.Fatalf("status %d, %+v (stderr %q)", r.code, m, r.stderr)
	}
}
