package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// With --isolate each scenario runs in a process of its own: this command
// again, for that one scenario, its report as JSON. A panic on a goroutine
// the harness cannot guard (one of the library's own) then ends that
// process only, and its scenario fails with the stacks the runtime printed;
// the other scenarios keep their verdicts. A child that outlives its
// watchdog by childGrace (its own watchdog did not end it: a hang outside
// any scenario's body) gets SIGQUIT, which makes the Go runtime print every
// goroutine's stack and exit, and its scenario fails with them.

// childGrace is how long a child may run past its scenario's watchdog.
var childGrace = time.Minute

// maxChildStderr bounds what is kept of a child's stderr (its stacks).
const maxChildStderr = 8 << 20

// runIsolated runs s in a child process and returns its Result; image is
// the Docker image the child uses (the one built once by the parent).
func runIsolated(ctx context.Context, c config, s scenario.Scenario, image string) scenario.Result {
	exe, err := os.Executable()
	if err != nil {
		return crashed(c, s, fmt.Errorf("chaos: --isolate: %w", err), nil)
	}
	watchdog := c.watchdog
	if watchdog <= 0 {
		watchdog = scenario.DefaultWatchdog(c.duration)
	}
	ctx, cancel := context.WithTimeout(ctx, watchdog+childGrace)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, childArgs(c, s, image)...)
	cmd.Env = append(os.Environ(), "GOTRACEBACK=all")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGQUIT) }
	cmd.WaitDelay = 10 * time.Second
	var stdout bytes.Buffer
	stderr := &capped{max: maxChildStderr}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	runErr := cmd.Run()
	var doc struct {
		Results []scenario.Result `json:"results"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &doc); err == nil && len(doc.Results) == 1 {
		return doc.Results[0]
	}
	if runErr == nil {
		runErr = errors.New("no report on its stdout")
	}
	if ctx.Err() != nil {
		runErr = fmt.Errorf("still running %v after its watchdog (SIGQUIT): %w", childGrace, runErr)
	}
	return crashed(c, s, runErr, stderr.Bytes())
}

// childArgs is the command line of the child that runs s.
func childArgs(c config, s scenario.Scenario, image string) []string {
	args := []string{"--scenario", s.Name, "--json", "--no-progress", "--backend", c.backend,
		"--duration", c.duration.String(), "--clients", strconv.Itoa(c.clients), "--svg-dir", c.svgDir}
	if c.seed != 0 {
		args = append(args, "--seed", strconv.FormatUint(c.seed, 10))
	}
	if image != "" {
		args = append(args, "--image", image)
	}
	if c.server != "" {
		args = append(args, "--server", c.server)
	}
	if c.transport != "" {
		args = append(args, "--client", string(c.transport))
	}
	if c.watchdog > 0 {
		args = append(args, "--watchdog", c.watchdog.String())
	}
	return args
}

// crashed is the Result of a scenario whose process ended without a
// report: it fails, with what the process printed (a panic's stacks).
func crashed(c config, s scenario.Scenario, err error, stderr []byte) scenario.Result {
	r := scenario.Result{Scenario: s.Name, Kind: s.Kind, Invariant: s.Invariant, Expect: s.Expect, Unsafe: s.Unsafe,
		Backend: c.backend, Seed: c.seed, Verdict: scenario.Fail, Expected: scenario.ExpectSafe,
		Aborted: fmt.Sprintf("its process ended without a report: %v", err), Dump: string(stderr)}
	if s.Unsafe {
		r.Expected = scenario.ExpectOverlap
	}
	r.Checks = []scenario.Check{{Name: "its process survives", OK: false, Detail: r.Aborted}}
	r.Outcome = r.Aborted
	return r
}

// childFiles returns the timelines the children wrote to dir, per
// scenario.
func childFiles(dir string, results []scenario.Result) map[string]string {
	paths := map[string]string{}
	for _, r := range results {
		p := filepath.Join(dir, r.Scenario+"-"+r.Backend+".svg")
		if _, err := os.Stat(p); err == nil {
			paths[r.Scenario] = p
		}
	}
	return paths
}

// capped is a buffer that keeps the last max bytes written to it.
type capped struct {
	buf []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	c.buf = append(c.buf, p...)
	if over := len(c.buf) - c.max; over > 0 {
		c.buf = c.buf[over:]
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *capped) Bytes() []byte { return c.buf }
