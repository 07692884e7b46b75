package redisproc_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// QUORUMLOCK_SERVER picks the server that Start runs: the same tests run
// against Redis and against Valkey.
func TestServerEnvPicksTheBinary(t *testing.T) {
	for _, tc := range []struct {
		env, binary, marker string
	}{
		{"", "redis-server", "redis_version:"},
		{"valkey-server", "valkey-server", "valkey_version:"},
	} {
		t.Run(tc.binary, func(t *testing.T) {
			if _, err := exec.LookPath(tc.binary); err != nil {
				t.Skipf("%s not installed (scripts/ensure-valkey.sh installs valkey-server)", tc.binary)
			}
			t.Setenv(redisproc.ServerEnv, tc.env)
			if got := redisproc.DefaultBinary(); got != tc.binary {
				t.Fatalf("DefaultBinary() = %q, want %q", got, tc.binary)
			}
			s, err := redisproc.Start(redisproc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			c, err := redis.Dial("tcp", s.Addr(), redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			info, err := redis.String(c.Do("INFO", "server"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(info, tc.marker) {
				t.Errorf("INFO server of the started %s lacks %q:\n%s", tc.binary, tc.marker, info)
			}
			if tc.binary == "redis-server" && strings.Contains(info, "valkey_version:") {
				t.Error("the default server is Valkey, want Redis")
			}
		})
	}
}
