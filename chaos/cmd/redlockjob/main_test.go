package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/workload"
)

// asJob makes the test binary the job itself: the tests run it with this
// variable set (and its workers inherit it).
const asJob = "REDLOCKJOB_TEST_AS_JOB"

func TestMain(m *testing.M) {
	if os.Getenv(asJob) == "1" {
		main()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// runJob runs one job to the end of its leader.
func runJob(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{dir}, args...)...)
	cmd.Env = append(os.Environ(), asJob+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("redlockjob %v: %v\n%s", args, err, out)
	}
}

// A job that starts while a worker of another job of its key still runs
// records an overlap naming that job, however the worker got there (its
// leader is gone); once the worker is killed, the next job starts clean.
func TestOverlapIsRecordedByTheKernel(t *testing.T) {
	dir := t.TempDir()
	for _, sub := range []string{"jobs", "workers"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := &workload.Commands{Dir: dir}
	runJob(t, dir, "0.1", "k", "0s", "ignore", "setsid")
	// The worker records itself once it ignores SIGTERM.
	var recs workload.JobRecords
	for deadline := time.Now().Add(30 * time.Second); len(recs.Workers["0.1"]) == 0; time.Sleep(5 * time.Millisecond) {
		var err error
		if recs, err = c.Records(); err != nil || time.Now().After(deadline) {
			t.Fatalf("records %+v, %v: no worker of job 0.1", recs, err)
		}
	}
	worker := recs.Workers["0.1"][0]
	t.Cleanup(func() { syscall.Kill(worker, syscall.SIGKILL) })
	runJob(t, dir, "1.2", "k", "0s", "exit", "none")
	runJob(t, dir, "1.3", "other", "0s", "exit", "none")
	if recs, _ = c.Records(); len(recs.Overlaps()) != 1 || recs.Overlaps()[0].ID != "1.2" || recs.Overlaps()[0].Holder != "0.1" {
		t.Fatalf("overlaps %v; want job 1.2's, with job 0.1", recs.Overlaps())
	}
	if err := syscall.Kill(worker, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, left, _ := c.AwaitJobsEnded(context.Background(), 50*time.Millisecond); len(left) != 1 || left[0] != "0.1" {
		t.Fatalf("jobs running after a SIGTERM to the worker: %v; want 0.1, which ignores it", left)
	}
	syscall.Kill(worker, syscall.SIGKILL)
	if _, left, err := c.AwaitJobsEnded(context.Background(), time.Minute); err != nil || len(left) != 0 {
		t.Fatalf("jobs running after the worker's SIGKILL: %v, %v", left, err)
	}
	runJob(t, dir, "2.4", "k", "0s", "exit", "none")
	recs, _ = c.Records()
	if len(recs.Jobs) != 4 || len(recs.Overlaps()) != 1 {
		t.Fatalf("records %+v: want 4 jobs, one overlap", recs.Jobs)
	}
}
