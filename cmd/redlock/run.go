package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

const runUsage = `usage: redlock run [flags] KEY -- COMMAND [ARG...]

Run COMMAND while holding the lock KEY on a quorum of the masters, renewing
it every third of its TTL. COMMAND gets REDLOCK_KEY, REDLOCK_TOKEN and, with
--fence, REDLOCK_FENCE in its environment, and runs in a process group of
its own under a guardian process. Its job (COMMAND and what it starts)
never outlives the lock: it gets SIGTERM, then SIGKILL after --kill-after,
when the lock is lost or redlock is killed, and is dead before the lock's
validity could end without a renewal. When COMMAND ends, what it left
running is stopped the same way. The lock is released once no process of
the job is left, whatever COMMAND's status, and redlock exits once every
master answered the release (waiting 2s, or twice --node-timeout, at most).

Flags:
  -w, --timeout DURATION  give up waiting for the lock after DURATION (30s,
                          500ms, or seconds as in flock: 10); default: wait
  -n, --nonblock          one attempt only
  -E, --conflict-exit-code N
                          exit status when the lock is not acquired (default 1)
  --ttl DURATION          the lock's TTL, renewed every third of it (default 30s)
  --fence                 take a fencing token and pass it as REDLOCK_FENCE
  --kill-after DURATION   SIGKILL this long after the job's SIGTERM (default
                          10s), and never later than the lock's validity allows
  --note TEXT             a note for whoever inspects the lock (redlock
                          inspect prints it beside the host, pid and start)
` + prefixUsage + commonUsage + `
Exit status: COMMAND's own when it ended with the lock held throughout
(128+N when signal N ended it); -E's (default 1) when the lock was not
acquired, and COMMAND did not run; 75 when the lock was lost, or no renewal
got through in time, while COMMAND ran, and the job was stopped; 64 for bad
usage, a bad node list, or masters that refuse INFO to the user (the restart
guard cannot read them: see redlock doctor); 69 when fewer than a quorum of
masters answer, or can grant (masters that restarted are held back by the
restart guard for up to the longest TTL); 70 when the guardian died (the job
was killed); 126/127 when COMMAND cannot be run.
SIGINT, SIGTERM, SIGHUP and SIGQUIT to redlock are forwarded to COMMAND's
process group.
The lock keeps a record of who holds it beside the lock key (host, pid,
start time, COMMAND and its pid, --note: redlock.WithMetadata), which
redlock inspect prints. After each renewal redlock warns on stderr when
fewer masters than all hold the lock (one or two more failed masters would
lose it).

Example (cron: one run at a time across all hosts, skip when busy):
  */5 * * * * REDLOCK_NODES=r1:6379,r2:6379,r3:6379 redlock run -n -E 0 report -- /opt/report.sh
`

// forwarded are the signals that redlock passes on to the command.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// runResult is what "run --json" prints on stderr (stdout is the
// command's) when it ends.
type runResult struct {
	Key      string `json:"key"`
	Acquired bool   `json:"acquired"`
	Token    string `json:"token,omitempty"`
	Fence    int64  `json:"fence,omitempty"`
	// Outcome: "done" (the command ended, the lock held throughout),
	// "conflict" (not acquired), "lost" (lost while the command ran),
	// "interrupted" (a signal ended the wait), "error".
	Outcome string `json:"outcome"`
	// CommandStatus is the command's exit status (128+N for signal N),
	// or null when it did not run or did not end normally.
	CommandStatus *int   `json:"command_status"`
	ExitCode      int    `json:"exit_code"`
	Error         string `json:"error,omitempty"`
}

type runFlags struct {
	wait      duration
	nonblock  bool
	conflict  int
	ttl       duration
	fence     bool
	killAfter duration
	note      string
}

func cmdRun(args []string, e env) int {
	fs, c := newFlags("run", 0)
	f := runFlags{conflict: exitConflict, ttl: duration(30 * time.Second), killAfter: duration(10 * time.Second)}
	fs.Var(&f.wait, "w", "")
	fs.Var(&f.wait, "timeout", "")
	fs.BoolVar(&f.nonblock, "n", false, "")
	fs.BoolVar(&f.nonblock, "nonblock", false, "")
	fs.IntVar(&f.conflict, "E", exitConflict, "")
	fs.IntVar(&f.conflict, "conflict-exit-code", exitConflict, "")
	fs.Var(&f.ttl, "ttl", "")
	fs.BoolVar(&f.fence, "fence", false, "")
	fs.Var(&f.killAfter, "kill-after", "")
	fs.StringVar(&f.note, "note", "", "")
	kf := addKeyFlags(fs)
	pos, command, err := parseArgs(fs, args, 1)
	if code, ok := handleParse(e, "run", runUsage, err); !ok {
		return code
	}
	waitSet := false
	fs.Visit(func(fl *flag.Flag) { waitSet = waitSet || fl.Name == "w" || fl.Name == "timeout" })
	switch {
	case len(pos) == 0 || pos[0] == "":
		return e.usageError("run", errors.New("no KEY"))
	case len(command) == 0:
		return e.usageError("run", errors.New("no COMMAND (write: redlock run KEY -- COMMAND [ARG...])"))
	case f.conflict < 0 || f.conflict > 255:
		return e.usageError("run", fmt.Errorf("conflict exit code %d outside 0..255", f.conflict))
	case f.conflict == exitLost:
		return e.usageError("run", fmt.Errorf("conflict exit code %d is the lost-lock status", exitLost))
	case len(f.note) > maxNote:
		return e.usageError("run", fmt.Errorf("--note longer than %d bytes", maxNote))
	}
	if waitSet && f.wait == 0 {
		f.nonblock = true
	}

	sigs, stopCatching := catch(forwarded...) // a signal while waiting for the lock ends the wait: the command never runs
	defer stopCatching()

	ms, code, ok := setup(context.Background(), "run", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	nodes := ms.nodes()
	renewed := newRenewals()
	locker, err := redlock.New(nodes, redlock.Config{
		AutoRenew:   true,
		Fencing:     f.fence,
		NodeTimeout: time.Duration(c.nodeTimeout),
		Observer:    renewed,
		KeyPrefix:   kf.resolve(fs, e),
	})
	if err != nil {
		return e.usageError("run", err)
	}
	// Every release the library sent (an Unlock's deletes on the masters
	// that had not answered when it returned at the quorum, the release of
	// a refused attempt's partial grant) reaches its master before run
	// exits: Close waits for them, before the Nodes close.
	defer closeLocker(locker, closeWait(c, time.Duration(f.ttl)))
	key := pos[0]
	k := keysOf(kf.resolve(fs, e), key)
	res := runResult{Key: key}
	if err := ms.identitiesReadable(context.Background(), keeperTimeout(c)); err != nil {
		res.Outcome, res.ExitCode = "error", exitUsage
		return finishRun(e, c, res, "run: "+err.Error())
	}
	lk, sig, err := acquire(locker, key, f, waitSet, sigs, recordFields(command, f.note))
	acquired := time.Now()
	switch {
	case sig != nil:
		if lk != nil {
			unlock(c, locker, lk, time.Duration(f.ttl))
		}
		res.Outcome, res.ExitCode = "interrupted", 128+int(sig.(syscall.Signal))
		return finishRun(e, c, res, fmt.Sprintf("run: %v while waiting for %q", sig, key))
	case errors.Is(err, redlock.ErrInvalid):
		res.Outcome, res.ExitCode = "error", exitUsage
		return finishRun(e, c, res, "run: "+err.Error())
	case err != nil:
		var qe *redlock.QuorumError
		if errors.As(err, &qe) && qe.Failed > qe.Nodes-qe.Quorum {
			res.Outcome, res.ExitCode = "error", exitUnavailable
			return finishRun(e, c, res, "run: "+err.Error())
		}
		// Held elsewhere: silent, as flock(1) is; the status says it.
		res.Outcome, res.ExitCode, res.Error = "conflict", f.conflict, err.Error()
		return finishRun(e, c, res, "")
	}
	res.Acquired, res.Token, res.Fence = true, lk.Token(), lk.Fence()
	kp := startKeeper(e, ms, locker.Quorum(), keeperTimeout(c), k, lk, acquired)
	return supervise(e, c, kp, locker, lk, command, f, sigs, renewed, res)
}

// maxNote is the longest --note.
const maxNote = 1024

// recordFields are the holder record's fields (holder.go) that run
// acquires the lock with (redlock.WithMetadata); the keeper adds COMMAND's
// pid once it started, and the time the lock was granted.
func recordFields(command []string, note string) map[string]string {
	host, _ := os.Hostname()
	md := map[string]string{fieldHost: host, fieldPID: strconv.Itoa(os.Getpid()),
		fieldStarted: time.Now().UTC().Format(time.RFC3339), fieldCommand: filepath.Base(command[0])}
	if note != "" {
		md[fieldNote] = note
	}
	return md
}

// keeperTimeout bounds each call of run's keeper (keeper.go) to one
// master and elect's resignation, and (twice it) the wait for releases in
// flight at exit: the node timeout, at least a second, since none is in a
// hurry.
func keeperTimeout(c *common) time.Duration { return max(time.Duration(c.nodeTimeout), time.Second) }

// acquire takes the lock as the flags say, with a holder record of md. A
// signal from sigs cancels the wait; it is returned (and the lock, if it
// was taken meanwhile, for the caller to release).
func acquire(locker *redlock.Locker, key string, f runFlags, waitSet bool, sigs <-chan os.Signal, md map[string]string) (*redlock.Lock, os.Signal, error) {
	var lk *redlock.Lock
	sig, err := untilSignal(sigs, func(ctx context.Context) (err error) {
		if waitSet && !f.nonblock {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, time.Duration(f.wait))
			defer cancel()
		}
		if f.nonblock {
			lk, err = locker.TryLock(ctx, key, time.Duration(f.ttl), redlock.WithMetadata(md))
		} else {
			lk, err = locker.Lock(ctx, key, time.Duration(f.ttl), redlock.WithMetadata(md))
		}
		return err
	})
	return lk, sig, err
}

// finishRun prints msg (if any) or, with --json, the result, and returns
// the exit status.
func finishRun(e env, c *common, res runResult, msg string) int {
	if msg != "" && res.Error == "" {
		res.Error = msg
	}
	if c.json {
		writeJSON(e.stderr, res)
	} else if msg != "" {
		e.failf(res.ExitCode, "%s", msg)
	}
	return res.ExitCode
}

// supervise runs the command under lk and returns redlock's exit status.
// It releases the lock only once no process of the command's job is left.
func supervise(e env, c *common, kp *keeper, locker *redlock.Locker, lk *redlock.Lock, command []string, f runFlags, sigs <-chan os.Signal, renewed renewals, res runResult) int {
	key := lk.Key()
	extra := []string{"REDLOCK_KEY=" + key, "REDLOCK_TOKEN=" + lk.Token()}
	if f.fence {
		extra = append(extra, "REDLOCK_FENCE="+strconv.FormatInt(lk.Fence(), 10))
	}
	j, err := startJob(e, command, extra, f, lk.Until())
	if err != nil {
		kp.stop()
		unlock(c, locker, lk, time.Duration(f.ttl))
		res.Outcome, res.ExitCode = "error", exitSoftware
		return finishRun(e, c, res, fmt.Sprintf("run: starting the command's guardian: %v", err))
	}
	done := lk.Done()
	for events := j.events; events != nil; {
		select {
		case m, ok := <-events:
			if !ok {
				events = nil
				break
			}
			j.note(m)
			if m.verb == msgStarted {
				kp.started(j.pgid)
			}
		case s := <-sigs:
			j.signal(s.(syscall.Signal))
		case <-renewed.c:
			j.setUntil(lk.Until())
		case <-renewed.ok:
			kp.renewed()
		case <-done:
			done = nil
			if errors.Is(lk.Err(), redlock.ErrLockLost) {
				j.stop()
			}
		}
	}
	gerr := j.end()
	lockErr := lk.Err() // nil: held until the whole job ended
	kp.stop()
	unlock(c, locker, lk, time.Duration(f.ttl))
	res.CommandStatus = j.status
	switch {
	case j.failed != nil:
		res.CommandStatus = nil
		res.Outcome, res.ExitCode = "error", exitCannotExec
		if code, _ := j.failed.int(); code == exitNotFound {
			res.ExitCode = exitNotFound
		}
		return finishRun(e, c, res, "run: "+j.failed.rest())
	case !j.done:
		res.Outcome, res.ExitCode = "error", exitSoftware
		return finishRun(e, c, res, fmt.Sprintf("run: the command's guardian died (%v); every process of the command was killed", gerr))
	case errors.Is(lockErr, redlock.ErrLockLost):
		res.Outcome, res.ExitCode = "lost", exitLost
		return finishRun(e, c, res, fmt.Sprintf("run: lost the lock %q while the command ran (%v); the command was stopped", key, lockErr))
	case j.reason == stopValidity && j.pgid == 0:
		res.Outcome, res.ExitCode = "lost", exitLost
		return finishRun(e, c, res, fmt.Sprintf("run: the lock %q was too close to the end of its validity to start the command; it did not run", key))
	case j.reason == stopValidity:
		res.Outcome, res.ExitCode = "lost", exitLost
		return finishRun(e, c, res, fmt.Sprintf("run: no renewal of the lock %q got through before its validity ran short; the command was stopped", key))
	case j.status == nil:
		res.Outcome, res.ExitCode = "error", exitSoftware
		return finishRun(e, c, res, "run: the command's guardian did not report its status")
	}
	res.Outcome, res.ExitCode = "done", *j.status
	return finishRun(e, c, res, "")
}

// renewals tells supervise of every renewal of the lock, so that the
// guardian learns each new Until, and of each one that succeeded, after
// which the keeper counts the masters that hold the lock.
type renewals struct {
	redlock.NopObserver
	c  chan struct{} // every renewal: Until moved
	ok chan struct{} // every renewal that succeeded
}

func newRenewals() renewals {
	return renewals{c: make(chan struct{}, 1), ok: make(chan struct{}, 1)}
}

// Renew signals c, and ok for a renewal that succeeded.
func (r renewals) Renew(ev redlock.RenewEvent) {
	notify(r.c)
	if ev.Err == nil {
		notify(r.ok)
	}
}

// notify signals c without waiting: one pending signal is enough.
func notify(c chan<- struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// unlock releases lk, and its holder record with it, on every master
// before redlock exits. Unlock may return at a quorum, its deletes on the
// other masters still in flight: Close waits for them (and for any
// release sent again after a failure), bounded by closeWait, so that a
// slow master does not keep the key until its TTL.
func unlock(c *common, locker *redlock.Locker, lk *redlock.Lock, ttl time.Duration) {
	lk.Unlock(context.Background())
	closeLocker(locker, closeWait(c, ttl))
}

// closeWait bounds run's wait for the library's releases in flight when
// it exits: twice keeperTimeout (2s by default), and never beyond the TTL,
// past which every master dropped the lock on its own.
func closeWait(c *common, ttl time.Duration) time.Duration {
	return min(ttl, 2*keeperTimeout(c))
}

// closeLocker closes locker, waiting up to wait for its releases in
// flight. A release that has not landed by then (its master down or too
// slow) is given up: the key expires there at its TTL.
func closeLocker(locker *redlock.Locker, wait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	locker.Close(ctx)
}
