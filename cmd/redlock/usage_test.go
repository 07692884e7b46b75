package main_test

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

func TestBadInputGivesOneLine(t *testing.T) {
	c := startCluster(t, 1, redisproc.Options{})
	dead := "127.0.0.1:1,127.0.0.1:2," + c.nodes
	for _, tc := range []struct {
		name, nodes string
		args        []string
		want        int
	}{
		{"no command", c.nodes, nil, 64},
		{"unknown command", c.nodes, []string{"lock"}, 64},
		{"no nodes", "", []string{"inspect", "k"}, 64},
		{"bad port", "", []string{"inspect", "--nodes", "a:b", "k"}, 64},
		{"no port", "", []string{"doctor", "--nodes", "redis-a"}, 64},
		{"bad scheme", "", []string{"inspect", "--nodes", "http://a:1", "k"}, 64},
		{"bad db", "", []string{"inspect", "--nodes", "redis://a:1/x", "k"}, 64},
		{"empty entry", "", []string{"inspect", "--nodes", c.nodes + ",", "k"}, 64},
		{"twice", "", []string{"inspect", "--nodes", c.nodes + "," + c.nodes, "k"}, 64},
		{"bad flag", c.nodes, []string{"run", "--bogus", "k", "--", "true"}, 64},
		{"bad duration", c.nodes, []string{"run", "-w", "soon", "k", "--", "true"}, 64},
		{"lost code as -E", c.nodes, []string{"run", "-E", "75", "k", "--", "true"}, 64},
		{"ttl too short", c.nodes, []string{"run", "--ttl", "10ms", "k", "--", "true"}, 64},
		{"no key", c.nodes, []string{"run"}, 64},
		{"no command to run", c.nodes, []string{"run", "k"}, 64},
		{"unlock without token", c.nodes, []string{"unlock", "k"}, 64},
		{"token and force", c.nodes, []string{"unlock", "k", "--token", "t", "--force"}, 64},
		{"inspect bad permits", c.nodes, []string{"inspect", "a", "--permits", "-1"}, 64},
		{"unlock too many permits", c.nodes, []string{"unlock", "a", "--force", "--permits", "1025"}, 64},
		{"unlock two keys", c.nodes, []string{"unlock", "a", "b", "--force"}, 64},
		{"note too long", c.nodes, []string{"run", "--note", strings.Repeat("x", 1025), "k", "--", "true"}, 64},
		{"elect ttl too short", c.nodes, []string{"elect", "--ttl", "10ms", "k", "v"}, 64},
		{"no quorum", dead, []string{"run", "k", "--", "true"}, 69},
		{"no quorum elect", dead, []string{"elect", "k", "v"}, 69},
		{"no quorum inspect", dead, []string{"inspect", "k"}, 69},
		{"command not found", c.nodes, []string{"run", "k", "--", "/nonexistent/cmd"}, 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := redlockRun(t, tc.nodes, tc.args...)
			if r.code != tc.want {
				t.Errorf("status %d, want %d (stderr %q)", r.code, tc.want, r.stderr)
			}
			if tc.name == "no command" {
				return // prints the usage
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "redlock: ") || strings.Contains(r.stderr, "goroutine") {
				t.Errorf("stderr %q: want one line", r.stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	for _, sub := range []string{"run", "doctor", "inspect", "unlock", "elect", "version"} {
		for _, h := range []string{"-h", "--help"} {
			r := redlockRun(t, "", sub, h)
			if r.code != 0 || !strings.HasPrefix(r.stdout, "usage: redlock "+sub) || !strings.Contains(r.stdout, "Example") {
				t.Errorf("%s %s: status %d, output %q", sub, h, r.code, r.stdout)
			}
		}
	}
	if r := redlockRun(t, "", "--help"); r.code != 0 || !strings.Contains(r.stdout, "Example") {
		t.Errorf("redlock --help: status %d, output %q", r.code, r.stdout)
	}
}
