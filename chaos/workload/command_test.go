package workload_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// commandsIn returns Commands whose jobs record into a new directory, with
// log as their records.
func commandsIn(t *testing.T, log string) *workload.Commands {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "jobs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "log"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	return &workload.Commands{Dir: dir}
}

// The history rebuilt from the jobs' records overlaps exactly where a job
// recorded an overlap, so both checkers judge what the jobs saw.
func TestRecordJobs(t *testing.T) {
	base := time.Now()
	// line is a record of a job started ms after base.
	line := func(kind, id, key string, ms int, fence int, rest string) string {
		at := base.Add(time.Duration(ms) * time.Millisecond).UnixNano()
		return kind + " " + id + " " + key + " " + strconv.FormatInt(at, 10) + " " + strconv.Itoa(fence) + " 100" + rest + "\n"
	}
	for _, tc := range []struct {
		name     string
		log      string
		overlaps int
		keys     []string
	}{
		{"one after the other", line("start", "0.1", "a", 10, 1, "") + "worker 0.1 101\n" + line("start", "1.2", "a", 20, 2, "") +
			line("start", "2.3", "b", 15, 1, ""), 0, nil},
		{"overlap with the job just before", line("start", "0.1", "a", 10, 1, "") + line("overlap", "1.2", "a", 20, 2, " 0.1") +
			line("start", "2.3", "a", 30, 3, ""), 1, []string{"a"}},
		{"overlap with an older job", line("start", "0.1", "a", 10, 1, "") + line("overlap", "1.2", "a", 20, 2, " 0.1") +
			line("overlap", "2.3", "a", 30, 3, " 0.1") + line("start", "3.4", "b", 5, 1, ""), 2, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := commandsIn(t, tc.log).Records()
			if err != nil {
				t.Fatal(err)
			}
			h := checker.NewHistory(base)
			workload.RecordJobs(h, recs, base.Add(time.Second))
			c := checker.Check(h.Events())
			if len(c.Intervals) != len(recs.Jobs) || len(c.Overlaps) != tc.overlaps {
				t.Fatalf("%d intervals, %d overlaps (%v); want %d and %d", len(c.Intervals), len(c.Overlaps), c.Overlaps, len(recs.Jobs), tc.overlaps)
			}
			for _, o := range c.Overlaps {
				if o.Key != tc.keys[0] {
					t.Errorf("overlap on key %s", o.Key)
				}
			}
			if n := len(recs.Overlaps()); (n > 0) != (tc.overlaps > 0) {
				t.Errorf("%d overlap records, %d overlaps", n, tc.overlaps)
			}
		})
	}
}

func TestRecordsRefusesGarbage(t *testing.T) {
	for _, log := range []string{"start 0.1 a x 1 100\n", "nonsense\n", "overlap 0.1 a 1 1 100\n", "start x.1 a 1 1 100\n"} {
		if _, err := commandsIn(t, log).Records(); err == nil {
			t.Errorf("%q: no error", log)
		}
	}
}

// A job runs while its mark is locked; AwaitJobsEnded names it, and not the
// jobs whose mark is free or not yet locked.
func TestAwaitJobsEnded(t *testing.T) {
	c := commandsIn(t, "")
	for _, name := range []string{"0.1", "0.2", "0.3.tmp"} {
		if err := os.WriteFile(filepath.Join(c.Dir, "jobs", name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(c.Dir, "jobs", "0.2"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	_, left, err := c.AwaitJobsEnded(context.Background(), 20*time.Millisecond)
	if err != nil || len(left) != 1 || left[0] != "0.2" {
		t.Fatalf("left %v, %v; want [0.2]", left, err)
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if _, left, err := c.AwaitJobsEnded(context.Background(), time.Minute); err != nil || len(left) != 0 {
		t.Fatalf("left %v, %v after the job ended", left, err)
	}
}
