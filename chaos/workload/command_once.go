package workload

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// OnceSpec is one "redlock run" of RunOnce.
type OnceSpec struct {
	// ID is the job's id, "slot.n" with slot the client whose proxies it
	// goes through (the records name the slot by it).
	ID string
	// Key is the lock's name; TTL redlock's --ttl, Wait its -w, Hold how
	// long the job runs.
	Key             string
	TTL, Wait, Hold time.Duration
}

// RunOnce runs "redlock run" once through client's proxies, in a process
// of its own as every run is, with a job (redlockjob) that records its
// start (Records) and runs for sp.Hold, dying of SIGTERM at once. It
// returns once redlock exited, with its exit status; -1 and an error when
// it could not be started or was killed.
func (c *Commands) RunOnce(ctx context.Context, e *Env, client int, sp OnceSpec) (int, error) {
	errf, err := os.Create(filepath.Join(c.Dir, "runs", sp.ID))
	if err != nil {
		return -1, err
	}
	defer errf.Close()
	cmd := exec.CommandContext(ctx, c.redlock, "run", "--nodes", nodesURL(e.Net.Addrs(client), e.Cluster.Password()),
		"--node-timeout", NodeTimeout.String(), "--ttl", sp.TTL.String(), "--kill-after", "100ms", "--fence",
		"-E", fmt.Sprint(conflictStatus), "-w", sp.Wait.String(), e.Key(sp.Key), "--",
		c.job, c.Dir, sp.ID, sp.Key, sp.Hold.String(), "exit", "none") // the job records the key by its name
	cmd.Stderr = errf
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return -1, fmt.Errorf("workload: redlock run %s: %w", sp.ID, err)
	}
	return 0, nil
}

// Started reports whether job id started (it recorded its start).
func (c *Commands) Started(id string) bool { return c.started(id, false) }

// Unlock runs "redlock unlock --force KEY" (the key's full name on the
// masters) through client's proxies, and returns its exit status and
// output.
func (c *Commands) Unlock(ctx context.Context, e *Env, client int, key string) (int, string, error) {
	cmd := exec.CommandContext(ctx, c.redlock, "unlock", "--force", "--nodes", nodesURL(e.Net.Addrs(client), e.Cluster.Password()), key)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return exit.ExitCode(), string(out), nil
	}
	if err != nil {
		return -1, string(out), fmt.Errorf("workload: redlock unlock: %w", err)
	}
	return 0, string(out), nil
}
