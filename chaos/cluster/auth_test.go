package cluster_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

// TestPassword checks that a cluster started with a password refuses
// clients without AUTH, accepts them with it, reads the password back, and
// that the harness's own commands (Get, Keys, ClockJump, a restart's wait
// for PING) authenticate by themselves.
func TestPassword(t *testing.T) {
	const password = "chaos-secret"
	forBackends(t, func(t *testing.T, backend string) {
		ctx := ctxT(t)
		c := chaostest.Start(t, backend, cluster.Config{Nodes: 2, Password: password})
		if got := c.Password(); got != password {
			t.Fatalf("Password() = %q, want %q", got, password)
		}
		for _, n := range c.Nodes() {
			if _, err := do(t, n.Addr(), "PING"); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
				t.Errorf("%s: PING without AUTH: %v, want NOAUTH", n.Name(), err)
			}
			a, err := redis.Dial("tcp", n.Addr(), redis.DialPassword(password), redis.DialReadTimeout(time.Second))
			if err != nil {
				t.Fatalf("%s: dial with AUTH: %v", n.Name(), err)
			}
			if _, err := a.Do("SET", "pw:k", "v", "PX", 60000); err != nil {
				t.Errorf("%s: SET after AUTH: %v", n.Name(), err)
			}
			a.Close()
		}
		n := c.Nodes()[0]
		if v, ok, err := cluster.Get(ctx, n.Addr(), "pw:k"); err != nil || !ok || v != "v" {
			t.Errorf("Get = %q, %t, %v", v, ok, err)
		}
		if keys, err := cluster.Keys(ctx, n.Addr(), "pw:*"); err != nil || len(keys) != 1 {
			t.Errorf("Keys = %v, %v", keys, err)
		}
		if r, err := cluster.ClockJump(ctx, n.Addr(), time.Second); err != nil || r.Shifted != 1 {
			t.Errorf("ClockJump = %+v, %v", r, err)
		}
		if err := cluster.Restart(ctx, n, 0); err != nil {
			t.Fatalf("restart of a node with a password: %v", err)
		}
		if _, err := do(t, n.Addr(), "PING"); err == nil {
			t.Error("the restarted node answers PING without AUTH")
		}
	})
}

func TestPasswordDefaultIsNone(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	if c.Password() != "" {
		t.Errorf("Password() = %q, want none", c.Password())
	}
	mustDo(t, c.Nodes()[0].Addr(), "PING")
}

func TestComposeRefusesPassword(t *testing.T) {
	_, err := cluster.OpenCompose(ctxT(t), cluster.ComposeConfig{Config: cluster.Config{Password: "x"}})
	if !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("OpenCompose with a password: %v, want ErrUnsupported", err)
	}
}
