package main

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// job is redlock's side of the command it runs: the guardian process that
// starts, watches and stops it (see guardian.go), and the two pipes to it.
type job struct {
	ctrl   *os.File     // to the guardian: until, signal, stop
	events chan message // from the guardian; closed when it is gone
	gone   chan error   // the guardian's Wait, once
	pgid   int          // the command's process group, once started
	status *int         // the command's status, once it ended
	failed *message     // why the command could not start
	reason string       // the first "stopping" reason, if any
	done   bool         // the guardian saw the whole job end
}

// startJob starts the guardian of command, which starts command with the
// environment plus extra, under the lock whose validity ends at until.
func startJob(e env, command, extra []string, f runFlags, until time.Time) (*job, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	// Should the guardian die, the job's orphans come to redlock, which
	// then kills them (end). Linux only.
	becomeSubreaper()
	ctrlR, ctrlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	reportR, reportW, err := os.Pipe()
	if err != nil {
		ctrlR.Close()
		ctrlW.Close()
		return nil, err
	}
	args := append([]string{guardianCommand, guardianProtocol,
		strconv.FormatInt(int64(f.killAfter), 10), strconv.FormatInt(int64(f.ttl), 10)}, command...)
	cmd := exec.Command(exe, args...)
	cmd.Args[0] = "redlock"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.Env = append(os.Environ(), extra...)
	cmd.ExtraFiles = []*os.File{ctrlR, reportW}
	// A group of its own: a signal to redlock's group (a terminal's ^C,
	// a job-control kill) does not reach it; redlock forwards signals.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	j := &job{ctrl: ctrlW, events: make(chan message, 8), gone: make(chan error, 1)}
	sendUntil(ctrlW, until) // waits in the pipe for the guardian
	err = cmd.Start()
	ctrlR.Close()
	reportW.Close()
	if err != nil {
		ctrlW.Close()
		reportR.Close()
		return nil, err
	}
	go receive(reportR, j.events)
	go func() { j.gone <- cmd.Wait() }()
	return j, nil
}

// setUntil tells the guardian the lock's new validity.
func (j *job) setUntil(until time.Time) { sendUntil(j.ctrl, until) }

// signal forwards sig to the command's process group.
func (j *job) signal(sig syscall.Signal) { send(j.ctrl, msgSignal, int(sig)) }

// stop tells the guardian that the lock is lost.
func (j *job) stop() { send(j.ctrl, msgStop) }

// note records what a message from the guardian says.
func (j *job) note(m message) {
	switch m.verb {
	case msgStarted:
		if pid, err := m.int(); err == nil {
			j.pgid = int(pid)
		}
	case msgFailed:
		j.failed = &m
	case msgExited:
		if s, err := m.int(); err == nil {
			status := int(s)
			j.status = &status
		}
	case msgStopping:
		if j.reason == "" {
			j.reason = m.arg
		}
	case msgDone:
		j.done = true
	}
}

// end waits for the guardian to exit once its reports ended. When it died
// before the job was done, the job's processes, orphaned to redlock, are
// killed here. It returns the guardian's Wait error.
func (j *job) end() error {
	err := <-j.gone
	j.ctrl.Close()
	if !j.done && j.failed == nil {
		killJob(j.pgid)
	}
	return err
}
