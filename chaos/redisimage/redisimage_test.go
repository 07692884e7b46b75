package redisimage

import (
	"context"
	"os/exec"
	"strings"
	"testing"
)

func TestScriptIsValidBash(t *testing.T) {
	if !strings.Contains(script, "FROM scratch") || !strings.Contains(script, "ldd") {
		t.Fatal("the embedded script does not build a scratch image from ldd's libraries")
	}
	cmd := exec.Command("bash", "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v\n%s", err, out)
	}
}

func TestBuildWithoutRedisServerFails(t *testing.T) {
	t.Setenv("REDIS_SERVER", "/nonexistent/redis-server")
	_, err := Build(context.Background(), "quorumlock/never-built:test")
	if err == nil || !strings.Contains(err.Error(), "redis-server not found") {
		t.Errorf("Build without redis-server: %v, want a redis-server not found error", err)
	}
}
