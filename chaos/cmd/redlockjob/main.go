// Command redlockjob is the job that the chaos suite's safe-command scenario
// runs under "redlock run". It records, itself, whether another job of its
// key still runs when it starts, in a way that a job killed with SIGKILL
// cannot fool: the kernel's flock(2).
//
//	redlockjob DIR ID KEY HOLD TERM WORKER
//
// DIR is the run's directory, ID the job's id, KEY its lock's name. The job:
//
//  1. creates DIR/jobs/ID and holds an exclusive flock on it for as long as
//     any process of the job lives (the driver finds the job over when it
//     can take that lock);
//  2. tries an exclusive flock on DIR/KEY.lock without waiting, the key's
//     running mark, held the same way. Taking it means that no process of
//     any other job of KEY is alive: it appends "start ID KEY NS FENCE PID"
//     to DIR/log and writes ID to DIR/KEY.holder. Failing means that one
//     is: it appends "overlap ID KEY NS FENCE PID HOLDER", HOLDER being the
//     job that holds the mark, then waits for the mark in the background
//     (so that the jobs after it are checked against it too);
//  3. with WORKER "group" or "setsid", starts a worker (redlockjob -worker
//     DIR ID) that inherits both locks, ignores SIGTERM and sleeps until
//     killed, in the job's process group or, with "setsid", in a session of
//     its own; once it ignores SIGTERM it appends "worker ID PID" and
//     creates DIR/workers/ID;
//  4. runs for HOLD (a Go duration), then exits 0. With TERM "exit" it dies
//     of SIGTERM at once; with "ignore" it ignores it.
//
// NS is the time in Unix nanoseconds, FENCE the lock's fencing token
// (REDLOCK_FENCE, 0 without). Each record is one write to DIR/log, opened
// with O_APPEND, so records of concurrent jobs never interleave.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "-worker" {
		worker(os.Args[2], os.Args[3])
	}
	if len(os.Args) != 7 {
		fmt.Fprintln(os.Stderr, "usage: redlockjob DIR ID KEY HOLD TERM WORKER")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]); err != nil {
		fmt.Fprintln(os.Stderr, "redlockjob:", err)
		os.Exit(1)
	}
}

// worker ignores SIGTERM, says so, and sleeps until killed, holding the
// locks it inherited as fds 3 and 4.
func worker(dir, id string) {
	signal.Ignore(syscall.SIGTERM)
	err := record(dir, "worker", id, strconv.Itoa(os.Getpid()))
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "workers", id), nil, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "redlockjob:", err)
	}
	for {
		time.Sleep(time.Hour)
	}
}

func run(dir, id, key, hold, term, work string) error {
	d, err := time.ParseDuration(hold)
	if err != nil {
		return err
	}
	switch term {
	case "ignore":
		signal.Ignore(syscall.SIGTERM)
	case "exit": // SIGTERM's default: the process dies
	default:
		return fmt.Errorf("TERM %q is neither exit nor ignore", term)
	}
	self, err := mark(dir, id)
	if err != nil {
		return err
	}
	running, err := os.OpenFile(filepath.Join(dir, key+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	fence := os.Getenv("REDLOCK_FENCE")
	if fence == "" {
		fence = "0"
	}
	now := strconv.FormatInt(time.Now().UnixNano(), 10)
	pid := strconv.Itoa(os.Getpid())
	holder := filepath.Join(dir, key+".holder")
	switch err := syscall.Flock(int(running.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); {
	case err == nil:
		if err := os.WriteFile(holder, []byte(id), 0o644); err != nil {
			return err
		}
		if err := record(dir, "start", id, key, now, fence, pid); err != nil {
			return err
		}
	case errors.Is(err, syscall.EWOULDBLOCK):
		other, _ := os.ReadFile(holder)
		if err := record(dir, "overlap", id, key, now, fence, pid, strings.TrimSpace(string(other))); err != nil {
			return err
		}
		go func() {
			if syscall.Flock(int(running.Fd()), syscall.LOCK_EX) == nil {
				os.WriteFile(holder, []byte(id), 0o644)
			}
		}()
	default:
		return err
	}
	if work != "none" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		w := exec.Command(exe, "-worker", dir, id)
		w.ExtraFiles = []*os.File{self, running}
		w.SysProcAttr = &syscall.SysProcAttr{Setsid: work == "setsid"}
		if err := w.Start(); err != nil {
			return err
		}
		w.Process.Release() // the worker outlives the leader: not ours to wait for
	}
	time.Sleep(d)
	return nil
}

// mark creates DIR/jobs/ID holding an exclusive flock, under a temporary
// name until it holds it, so that the driver never sees it unlocked while
// the job lives.
func mark(dir, id string) (*os.File, error) {
	tmp := filepath.Join(dir, "jobs", id+".tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return nil, err
	}
	return f, os.Rename(tmp, filepath.Join(dir, "jobs", id))
}

// record appends one line of fields to DIR/log in one write.
func record(dir string, fields ...string) error {
	f, err := os.OpenFile(filepath.Join(dir, "log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strings.Join(fields, " ") + "\n")
	return errors.Join(err, f.Close())
}
