package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// child is the command that "run" runs, the leader of its own process
// group, so that a lost lock stops it and everything it started.
type child struct {
	pgid   int
	exited chan error // receives cmd.Wait's error once
}

// startChild starts command with the environment plus extra.
func startChild(e env, command []string, extra []string) (*child, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	cmd.Env = append(os.Environ(), extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{pgid: cmd.Process.Pid, exited: make(chan error, 1)}
	go func() { c.exited <- cmd.Wait() }()
	return c, nil
}

// signal sends sig to the command's process group.
func (c *child) signal(sig syscall.Signal) {
	syscall.Kill(-c.pgid, sig)
}

// exitStatus is the status a shell would report for a command that ended
// with err from Wait: its exit code, or 128+N for signal N. ok is false when
// err is not about how the command ended.
func exitStatus(err error) (status int, ok bool) {
	if err == nil {
		return 0, true
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return 0, false
	}
	if ws, isWS := ee.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return 128 + int(ws.Signal()), true
	}
	return ee.ExitCode(), true
}
