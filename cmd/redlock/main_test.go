package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// bin is the redlock binary that TestMain builds; the tests drive it as a
// user would.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "redlock-cmd-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "redlock")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/internal/redisproc.(*Server).Start.func1")); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// cluster is a set of masters for one test.
type cluster struct {
	servers []*redisproc.Server
	nodes   string // for REDLOCK_NODES
}

func startCluster(t *testing.T, n int, opts redisproc.Options) *cluster {
	t.Helper()
	servers := redistest.Start(t, n, opts)
	return &cluster{servers: servers, nodes: strings.Join(redistest.Addrs(servers), ",")}
}

// command returns redlock with args, with REDLOCK_NODES set to nodes
// (unset when nodes is empty), no other REDLOCK_ variable of the test's
// environment, and extra ("NAME=value") added.
func command(ctx context.Context, nodes string, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REDLOCK_") {
			env = append(env, kv)
		}
	}
	if nodes != "" {
		env = append(env, "REDLOCK_NODES="+nodes)
	}
	cmd.Env = append(env, extra...)
	// A process that outlived redlock and holds its output open must fail
	// a test, not hang it.
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

type result struct {
	stdout, stderr string
	code           int
}

// redlockRun runs redlock to the end and returns its output and status.
func redlockRun(t *testing.T, nodes string, args ...string) result {
	t.Helper()
	return redlockRunEnv(t, nodes, nil, args...)
}

// redlockRunEnv is redlockRun with extra variables in the environment.
func redlockRunEnv(t *testing.T, nodes string, extra []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := command(ctx, nodes, extra, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{out.String(), errb.String(), exitCode(t, err)}
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, exec.ErrWaitDelay):
		t.Errorf("redlock exited 0, but a process it started still held its output open")
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("redlock did not run: %v", err)
	return -1
}

// background starts redlock and returns it with its output buffers; wait
// for it with finish.
type bgRun struct {
	cmd       *exec.Cmd
	out, errb syncBuffer // read while redlock writes
	done      chan error
}

// syncBuffer is a bytes.Buffer safe for a writer and readers at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// has reports whether the buffer holds s, for await.
func (s *syncBuffer) has(sub string) func() bool {
	return func() bool { return strings.Contains(s.String(), sub) }
}

func background(t *testing.T, nodes string, args ...string) *bgRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	b := &bgRun{cmd: command(ctx, nodes, nil, args...), done: make(chan error, 1)}
	b.cmd.Stdout, b.cmd.Stderr = &b.out, &b.errb
	if err := b.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() { b.done <- b.cmd.Wait(); cancel() }()
	t.Cleanup(func() {
		b.cmd.Process.Kill()
		<-b.done
	})
	return b
}

// finish waits for the background redlock and returns its result.
func (b *bgRun) finish(t *testing.T) result {
	t.Helper()
	err := <-b.done
	b.done <- err // for the cleanup
	return result{b.out.String(), b.errb.String(), exitCode(t, err)}
}

// await polls cond until it holds, failing the test after a generous
// deadline.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// fileHas reports whether the file at path contains s.
func fileHas(path, s string) func() bool {
	return func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), s)
	}
}

// do sends one command to a master from the test.
func (c *cluster) do(t *testing.T, i int, cmd string, args ...any) any {
	t.Helper()
	n := pool.New(pool.Config{Addr: c.servers[i].Addr(), StallTimeout: 5 * time.Second}) // a setup may run long under load
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := n.Do(ctx, cmd, args...)
	if err != nil {
		t.Fatalf("%s on %s: %v", cmd, c.servers[i].Addr(), err)
	}
	return v
}

// locker returns a Locker over the cluster's masters, for setting up
// state that redlock should see.
func (c *cluster) locker(t *testing.T, cfg redlock.Config) *redlock.Locker {
	t.Helper()
	var nodes []redlock.Node
	for _, s := range c.servers {
		n := pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { n.Close() })
		nodes = append(nodes, n)
	}
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// decode parses JSON output into v, failing the test when it does not.
func decode(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("output is not the documented JSON: %v\n%s", err, s)
	}
}
