package main

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// The processes of a job are its process group (the command leads it) and,
// on Linux, every descendant of the process that reaps them (the guardian,
// or redlock once the guardian is gone): both are subreapers, so a process
// that left the group (setsid) and whose parent died is still their
// descendant.

// pollEvery is how often a job that is being killed is searched again for
// processes that the previous SIGKILL missed (forked meanwhile).
const pollEvery = 10 * time.Millisecond

// signalJob sends sig to the job's process group and to every descendant of
// this process outside it.
func signalJob(pgid int, sig syscall.Signal) {
	if pgid > 0 {
		syscall.Kill(-pgid, sig)
	}
	for _, pid := range descendants(os.Getpid()) {
		if g, err := syscall.Getpgid(pid); err == nil && g != pgid {
			syscall.Kill(pid, sig)
		}
	}
}

// groupAlive reports whether process group pgid still has a member (a
// zombie not yet reaped included).
func groupAlive(pgid int) bool {
	if pgid <= 0 {
		return false
	}
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// jobAlive reports whether a process of the job is left: a member of its
// group, or a live descendant of this process.
func jobAlive(pgid int) bool {
	return groupAlive(pgid) || len(descendants(os.Getpid())) > 0
}

// reap waits for every child of this process. It sends the status of the
// leader on leader, and closes none when this process has no child left (a
// subreaper with no child has no descendant either).
func reap(leaderPID int, leader chan<- syscall.WaitStatus, none chan<- struct{}) {
	defer close(none)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
		case err != nil:
			return // ECHILD
		case pid == leaderPID:
			leader <- ws
		}
	}
}

// killJob is redlock's last resort when the guardian died before the job
// ended: SIGKILL to every process of the job, until none is left. The
// leader died with the guardian (its parent-death signal); the others,
// orphaned, are redlock's children now (Linux), or still in the group.
func killJob(pgid int) {
	for {
		signalJob(pgid, syscall.SIGKILL)
		_, err := syscall.Wait4(-1, nil, 0, nil)
		if !errors.Is(err, syscall.ECHILD) {
			continue
		}
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(pollEvery)
	}
}

// shellStatus is the status a shell reports for a process that ended with
// ws: its exit code, or 128+N for signal N.
func shellStatus(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
