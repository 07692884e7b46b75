package workload

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// What the jobs of the command's chaos client recorded (see redlockjob),
// and the run's history rebuilt from it.

// JobRecord is one job's start as it recorded it.
type JobRecord struct {
	// Overlap is true when another job of the key still ran as it started
	// (its flock on the key's running mark failed); Holder is that job.
	Overlap bool
	Holder  string
	// ID is the job's id ("slot.n"), Slot the slot that ran it.
	ID   string
	Slot int
	Key  string
	// At is when it started (after its flock).
	At    time.Time
	Fence int64
	PID   int
}

// JobRecords are the records of a run: every job's start, in the order
// written, and the pids of the workers of each job.
type JobRecords struct {
	Jobs    []JobRecord
	Workers map[string][]int
}

// Overlaps returns the jobs that started while another job of their key ran.
func (r JobRecords) Overlaps() []JobRecord {
	var out []JobRecord
	for _, j := range r.Jobs {
		if j.Overlap {
			out = append(out, j)
		}
	}
	return out
}

// String describes a job's start, for a check's detail.
func (j JobRecord) String() string {
	s := fmt.Sprintf("job %s (key %s, fence %d, pid %d) started at %s", j.ID, j.Key, j.Fence, j.PID, j.At.Format("15:04:05.000000"))
	if j.Overlap {
		s += " while job " + j.Holder + " still ran"
	}
	return s
}

// started reports whether job id has started (its mark exists) and, if
// worker, whether its worker runs and ignores SIGTERM.
func (c *Commands) started(id string, worker bool) bool {
	_, err := os.Stat(filepath.Join(c.Dir, "jobs", id))
	if err == nil && worker {
		_, err = os.Stat(filepath.Join(c.Dir, "workers", id))
	}
	return err == nil
}

// Records reads what the jobs recorded.
func (c *Commands) Records() (JobRecords, error) {
	recs := JobRecords{Workers: map[string][]int{}}
	f, err := os.Open(filepath.Join(c.Dir, "log"))
	if errors.Is(err, os.ErrNotExist) {
		return recs, nil
	}
	if err != nil {
		return recs, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if err := recs.add(strings.Fields(sc.Text())); err != nil {
			return recs, fmt.Errorf("workload: job record %q: %w", sc.Text(), err)
		}
	}
	return recs, sc.Err()
}

// add parses one record: "start ID KEY NS FENCE PID", "overlap ID KEY NS
// FENCE PID HOLDER" or "worker ID PID".
func (r *JobRecords) add(f []string) error {
	var errs []error
	num := func(s string) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		errs = append(errs, err)
		return n
	}
	switch {
	case len(f) == 3 && f[0] == "worker":
		r.Workers[f[1]] = append(r.Workers[f[1]], int(num(f[2])))
	case len(f) == 6 && f[0] == "start", len(f) == 7 && f[0] == "overlap":
		j := JobRecord{Overlap: f[0] == "overlap", ID: f[1], Key: f[2],
			At: time.Unix(0, num(f[3])), Fence: num(f[4]), PID: int(num(f[5]))}
		slot, _, _ := strings.Cut(j.ID, ".")
		j.Slot = int(num(slot))
		if j.Overlap {
			j.Holder = f[6]
		}
		r.Jobs = append(r.Jobs, j)
	default:
		return errors.New("not a record")
	}
	return errors.Join(errs...)
}

// AwaitJobsEnded waits, for up to within, until no process of any job is
// left (each job's mark can be locked: its flock went with its last
// process), and returns when that was and the jobs that still ran then.
func (c *Commands) AwaitJobsEnded(ctx context.Context, within time.Duration) (time.Time, []string, error) {
	deadline := time.Now().Add(within)
	for {
		running, err := c.runningJobs()
		now := time.Now()
		if err != nil || len(running) == 0 || now.After(deadline) {
			return now, running, err
		}
		if !waitOrClosed(ctx.Done(), 10*time.Millisecond) {
			return now, running, ctx.Err()
		}
	}
}

// runningJobs returns the jobs that have a live process.
func (c *Commands) runningJobs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(c.Dir, "jobs"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			continue // not started yet (or killed before it locked its mark)
		}
		f, err := os.Open(filepath.Join(c.Dir, "jobs", e.Name()))
		if err != nil {
			return nil, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			out = append(out, e.Name())
		}
		f.Close()
	}
	return out, nil
}

// KillJobs sends SIGKILL to every process that runs this run's job binary
// (its workers included, recorded or not): the harness's clean-up after a
// command that let jobs run on. It reads /proc; elsewhere it kills the
// processes the jobs recorded.
func (c *Commands) KillJobs(recs JobRecords) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		for _, j := range recs.Jobs {
			syscall.Kill(j.PID, syscall.SIGKILL)
			for _, pid := range recs.Workers[j.ID] {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.TrimSuffix(exe, " (deleted)") == c.job {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// RecordJobs records the jobs in h as lock holds, so that the run's checkers
// and its timeline see them. A job records its start, not its end (a job
// killed with SIGKILL writes nothing more), so the end of each hold is the
// latest the flock allows: just before the next job of the key started
// (which took the key's running mark only once every process of this one
// was gone), or end for the last one. An overlap is the one exception: the
// job that held the mark then is drawn up to just past the start of the job
// it overlapped. So the holds overlap exactly where a job recorded an
// overlap. Job times are wall-clock times of other processes, converted to
// h's timeline by the wall clock.
func RecordJobs(h *checker.History, recs JobRecords, end time.Time) {
	byKey := map[string][]JobRecord{}
	for _, j := range recs.Jobs {
		byKey[j.Key] = append(byKey[j.Key], j)
	}
	for _, jobs := range byKey {
		slices.SortStableFunc(jobs, func(a, b JobRecord) int { return a.At.Compare(b.At) })
		until := make(map[string]time.Time, len(jobs))
		for i, j := range jobs {
			u := end
			if i+1 < len(jobs) {
				u = jobs[i+1].At.Add(-time.Nanosecond)
			}
			until[j.ID] = laterOf(u, j.At.Add(time.Nanosecond))
		}
		for _, j := range jobs {
			if _, ok := until[j.Holder]; j.Overlap && ok {
				until[j.Holder] = laterOf(until[j.Holder], j.At.Add(time.Nanosecond))
			}
		}
		for _, j := range jobs {
			id := h.GrantCall(checker.Event{Client: j.Slot, Key: j.Key, Token: j.Fence}, j.At, j.At, until[j.ID])
			h.Release(id, until[j.ID])
		}
	}
}

// laterOf returns the later of a and b.
func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
