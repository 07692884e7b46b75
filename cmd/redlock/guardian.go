package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// The guardian keeps the promise of "redlock run": the command's job never
// runs on without a lock, not even when redlock itself is killed.
//
// redlock starts its own binary again as the guardian (the hidden command
// guardianCommand), and the guardian starts the command. So the tree is
//
//	redlock run          takes and renews the lock, releases it at the end
//	 └ redlock guardian  a subreaper, in a process group of its own
//	    └ COMMAND        leader of the job's process group, SIGKILLed if the guardian dies
//	       └ ...         the job
//
// Why a process between them, rather than redlock starting the command
// itself and a watchdog beside it: a process that dies takes its pipes with
// it, so the guardian learns of redlock's death at once and for certain (the
// control pipe ends), whatever killed it (SIGKILL, the OOM killer); and as a
// subreaper (Linux) it inherits every orphan of the job, those that left
// the process group with setsid included, so it can find them, kill them
// and wait until none is left. A parent-death signal alone would reach the
// command's leader only, and process-group kills only the group.
//
// The guardian owns every deadline of the job, on the lock's validity
// (Until), which redlock sends at the start and after each renewal:
//
//   - it must be dead a margin (TTL/10, at most 500ms) before Until:
//     SIGKILL then to every process of the job;
//   - when redlock is gone (the control pipe ended), the job gets SIGTERM at
//     once and SIGKILL after --kill-after, or at that margin if sooner;
//   - when redlock says the lock is lost, or renewals stop moving Until (the
//     masters do not answer, redlock hangs), the same: SIGTERM, then SIGKILL
//     after --kill-after, never after the margin; to keep that grace, a job
//     whose Until has not moved gets its SIGTERM min(--kill-after, TTL/3)
//     before the margin;
//   - when the command (the leader) ends, whatever it left behind gets
//     SIGTERM, then SIGKILL after --kill-after (or at the margin);
//   - it does not start the command at all when Until is already so close
//     that the command would get its SIGTERM at once (the acquisition or
//     the start took most of the validity).
//
// It tells redlock when the job is done: no member of the group and no
// descendant of its own left. redlock releases the lock only then.

// guardianCommand is the hidden first argument that makes redlock the
// guardian of a job.
const guardianCommand = "__guardian"

// Limits of the guardian's deadlines.
const (
	maxKillMargin = 500 * time.Millisecond
	forever       = 100 * 365 * 24 * time.Hour
)

// guardian is the state of the guardian process.
type guardian struct {
	killAfter, margin, grace time.Duration
	report                   io.Writer
	pgid                     int
	until                    time.Time

	stopFrom   time.Time // when the job began to be stopped; zero before
	killing    bool      // SIGKILL was sent: send it again until none is left
	leaderDone bool      // the command (the leader) was reaped
	noChildren bool      // no child is left (so no descendant either)
}

// runGuardian is the guardian's main: args are guardianProtocol, the
// kill-after and the TTL in nanoseconds, and the command. Its fd 3 is the
// control pipe from redlock, fd 4 the report pipe to it.
func runGuardian(args []string) int {
	// The command's parent-death signal follows the thread that starts
	// it: this one, which lives as long as the process.
	runtime.LockOSThread()
	if len(args) < 4 || args[0] != guardianProtocol {
		fmt.Fprintln(os.Stderr, "redlock: the guardian is redlock run's own; it is not run by hand")
		return exitUsage
	}
	killAfter, err1 := strconv.ParseInt(args[1], 10, 64)
	ttl, err2 := strconv.ParseInt(args[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintf(os.Stderr, "redlock: guardian: %v\n", err)
		return exitUsage
	}
	// Not inherited by the command: only the guardian may hold them.
	syscall.CloseOnExec(3)
	syscall.CloseOnExec(4)
	ctrl, report := os.NewFile(3, "control"), os.NewFile(4, "report")
	// Caught, not ignored (an ignored signal stays ignored in the
	// command): redlock forwards them to the job; the guardian itself
	// ends only when the job has.
	signal.Notify(make(chan os.Signal, 1), forwarded...)

	g := &guardian{
		killAfter: time.Duration(killAfter),
		margin:    min(time.Duration(ttl)/10, maxKillMargin),
		grace:     min(time.Duration(killAfter), time.Duration(ttl)/3),
		report:    report,
	}
	msgs := make(chan message, 8)
	go receive(ctrl, msgs)
	first, ok := <-msgs
	if !ok || first.verb != msgUntil {
		return exitSoftware // redlock is gone before the command started
	}
	var err error
	if g.until, err = untilOf(first); err != nil {
		send(report, msgFailed, exitSoftware, err)
		return exitSoftware
	}
	if !time.Now().Before(g.termAt()) {
		// The lock could be kept no longer than it takes to stop the
		// job (a slow start, a machine that stalled): do not start it.
		send(report, msgStopping, stopValidity)
		send(report, msgDone)
		return exitOK
	}
	becomeSubreaper() // Linux only; elsewhere the job is its process group
	leader, err := g.start(args[3:])
	if err != nil {
		status := exitCannotExec
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			status = exitNotFound
		}
		send(report, msgFailed, status, err)
		return status
	}
	send(report, msgStarted, leader)
	exited := make(chan syscall.WaitStatus, 1)
	none := make(chan struct{})
	go reap(leader, exited, none)
	g.watch(msgs, exited, none)
	send(report, msgDone)
	return exitOK
}

// start starts the command as the leader of a new process group and
// returns its pid. The guardian reaps it (and every orphan) itself.
func (g *guardian) start(command []string) (int, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	dieWithParent(cmd.SysProcAttr)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	g.pgid = cmd.Process.Pid
	cmd.Process.Release() // reap waits for it, with every other child
	return g.pgid, nil
}

// watch runs the job's deadlines until no process of it is left.
func (g *guardian) watch(msgs <-chan message, exited <-chan syscall.WaitStatus, none <-chan struct{}) {
	timer := time.NewTimer(forever)
	defer timer.Stop()
	for !g.leaderDone || !g.noChildren || groupAlive(g.pgid) {
		timer.Reset(g.act(time.Now()))
		select {
		case m, ok := <-msgs:
			if ok {
				g.obey(m)
				break
			}
			// redlock is gone and nobody renews: stop the job, dead by
			// the margin before the last Until redlock sent.
			msgs = nil
			g.stop(stopOrphaned)
		case ws := <-exited:
			g.leaderDone = true
			send(g.report, msgExited, shellStatus(ws))
			if jobAlive(g.pgid) {
				g.stop(stopLeftovers)
			}
		case <-none:
			g.noChildren, none = true, nil
		case <-timer.C:
		}
	}
}

// obey acts on a message from redlock.
func (g *guardian) obey(m message) {
	switch m.verb {
	case msgUntil:
		if until, err := untilOf(m); err == nil {
			g.until = until
		}
	case msgSignal:
		if n, err := m.int(); err == nil {
			syscall.Kill(-g.pgid, syscall.Signal(n))
		}
	case msgStop:
		g.stop(stopLost)
	}
}

// stop begins to stop the job, once: SIGTERM to all of it now.
func (g *guardian) stop(why string) {
	if !g.stopFrom.IsZero() {
		return
	}
	g.stopFrom = time.Now()
	send(g.report, msgStopping, why)
	signalJob(g.pgid, syscall.SIGTERM)
}

// act sends the signals that are due at now and returns how long until it
// must run again.
func (g *guardian) act(now time.Time) time.Duration {
	next := g.due(now)
	if g.leaderDone && g.noChildren {
		// Members of the group that are not our children (no subreaper
		// here) end unseen: look again soon.
		next = min(next, pollEvery)
	}
	return next
}

// termAt is when the job gets SIGTERM if no renewal moves Until: early
// enough for its grace before the deadline.
func (g *guardian) termAt() time.Time { return g.until.Add(-g.margin - g.grace) }

// due sends the signals that are due at now and returns how long until the
// next one is.
func (g *guardian) due(now time.Time) time.Duration {
	deadline := g.until.Add(-g.margin) // the job must be dead by then
	if g.stopFrom.IsZero() {
		termAt := g.termAt()
		if now.Before(termAt) {
			return termAt.Sub(now)
		}
		g.stop(stopValidity)
	}
	killAt := g.stopFrom.Add(g.killAfter)
	if deadline.Before(killAt) {
		killAt = deadline
	}
	if !g.killing && now.Before(killAt) {
		return killAt.Sub(now)
	}
	g.killing = true
	signalJob(g.pgid, syscall.SIGKILL)
	return pollEvery
}
