package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

const electUsage = `usage: redlock elect [flags] NAME VALUE
       redlock elect --listen [flags] NAME

Leader election over the masters, as etcdctl elect does it. With VALUE,
campaign in the election NAME: wait while another candidate leads, and
once elected print the leader line

  NAME term=TERM value=VALUE

on stdout (NAME and VALUE quoted as Go quotes them when they hold spaces,
quotes, commas or "="), and lead until SIGINT, SIGTERM or SIGHUP; then
resign (a waiting candidate takes over at once) and exit 0. The
leadership is a fenced lock on NAME (redlock.Election), renewed every
third of --ttl; its holder record carries VALUE and TERM, the lock's
fencing token, greater than every earlier leader's: pass it to what the
leader acts on, so that a deposed leader can be turned away. When the leadership is lost (a
renewal finds it gone from a quorum) elect says so and exits 75.

With --listen, print the leader line of the current leader, if any, and of
every new leader or proclaimed value after it, in term order, until a
signal ends it (exit 0). A leader whose whole term falls between two
reads (at every change a master announces, and at least every quarter of
--ttl, at most a second) is not seen.

Flags:
  -l, --listen            observe the election instead of campaigning; no
                          VALUE
  --ttl DURATION          the leadership's TTL, renewed every third of it
                          (default 30s): a leader that dies without
                          resigning is replaced within it
` + prefixUsage + commonUsage + `
With --json, each leader line is a JSON object on one line instead, and a
campaign prints one more JSON object on stderr when it ends.

Exit status: 0 after a signal (a leader resigned first); 75 when the
leadership was lost; 128+N when signal N arrived while waiting to lead;
64 for bad usage, a bad node list, or masters that refuse INFO to the
user (see redlock doctor); 69 when fewer than a quorum of masters answer.

Example (one scheduler among the hosts; the others wait to take over):
  redlock elect scheduler "$(hostname)"
  redlock elect --listen scheduler
`

// electSignals end a leadership (with a resignation), a wait for one, or
// a listener.
var electSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}

// maxValue is the longest VALUE (redlock.MaxLeaderValueLen).
const maxValue = redlock.MaxLeaderValueLen

// leaderLine is a leader as elect prints it (with --json, one line each).
type leaderLine struct {
	Name  string `json:"name"`
	Term  int64  `json:"term"`
	Value string `json:"value"`
}

// electResult is what a campaign prints on stderr with --json when it
// ends.
type electResult struct {
	Name    string `json:"name"`
	Elected bool   `json:"elected"`
	Term    int64  `json:"term,omitempty"`
	Value   string `json:"value"`
	// Outcome: "resigned" (a signal ended the leadership), "lost" (the
	// leadership was lost), "interrupted" (a signal ended the wait),
	// "error".
	Outcome  string `json:"outcome"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error,omitempty"`
}

type electFlags struct {
	listen bool
	ttl    duration
}

func cmdElect(args []string, e env) int {
	fs, c := newFlags("elect", 0)
	f := electFlags{ttl: duration(30 * time.Second)}
	fs.BoolVar(&f.listen, "l", false, "")
	fs.BoolVar(&f.listen, "listen", false, "")
	fs.Var(&f.ttl, "ttl", "")
	kf := addKeyFlags(fs)
	pos, tail, err := parseArgs(fs, args, 2)
	if code, ok := handleParse(e, "elect", electUsage, err); !ok {
		return code
	}
	switch {
	case len(pos) == 0 || pos[0] == "":
		return e.usageError("elect", errors.New("no NAME"))
	case len(tail) > 0:
		return e.usageError("elect", fmt.Errorf("unexpected argument %q", tail[0]))
	case f.listen && len(pos) > 1:
		return e.usageError("elect", errors.New("--listen takes no VALUE (it observes; campaign without --listen)"))
	case !f.listen && len(pos) < 2:
		return e.usageError("elect", errors.New("no VALUE (campaign: redlock elect NAME VALUE; observe: redlock elect --listen NAME)"))
	case !f.listen && len(pos[1]) > maxValue:
		return e.usageError("elect", fmt.Errorf("VALUE longer than %d bytes", maxValue))
	}

	sigs, stopCatching := catch(electSignals...) // a signal while waiting to lead ends the wait
	defer stopCatching()

	ms, code, ok := setup(context.Background(), "elect", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	nodes := ms.nodes()
	locker, err := redlock.New(nodes, redlock.Config{
		NodeTimeout: time.Duration(c.nodeTimeout),
		KeyPrefix:   kf.resolve(fs, e),
	})
	if err != nil {
		return e.usageError("elect", err)
	}
	// A resignation's deletes still in flight on the masters that had not
	// answered when it reached a quorum land before elect exits.
	defer closeLocker(locker, closeWait(c, time.Duration(f.ttl)))
	el, err := redlock.NewElection(locker, pos[0], time.Duration(f.ttl))
	if err != nil {
		return e.usageError("elect", err)
	}
	if f.listen {
		return listen(e, c, el, sigs)
	}
	if err := ms.identitiesReadable(context.Background(), keeperTimeout(c)); err != nil {
		return finishElect(e, c, electResult{Name: el.Name(), Value: pos[1], Outcome: "error", ExitCode: exitUsage}, "elect: "+err.Error())
	}
	return campaign(e, c, el, pos[1], sigs)
}

// listen prints every leader of el until a signal arrives.
func listen(e env, c *common, el *redlock.Election, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	for ldr := range el.Observe(ctx) {
		printLeader(e, c, leaderLine{Name: el.Name(), Term: ldr.Term, Value: ldr.Value})
	}
	return exitOK
}

// campaign waits to lead el with value, prints the leader line, and leads
// until a signal (then resigns) or the leadership's loss.
func campaign(e env, c *common, el *redlock.Election, value string, sigs <-chan os.Signal) int {
	res := electResult{Name: el.Name(), Value: value}
	sig, err := untilSignal(sigs, func(ctx context.Context) error { return el.Campaign(ctx, value) })
	switch {
	case sig != nil:
		if err == nil {
			resign(e, c, el, true)
		}
		res.Outcome, res.ExitCode = "interrupted", 128+int(sig.(syscall.Signal))
		return finishElect(e, c, res, fmt.Sprintf("elect: %v while waiting to lead %q", sig, el.Name()))
	case errors.Is(err, redlock.ErrInvalid):
		res.Outcome, res.ExitCode = "error", exitUsage
		return finishElect(e, c, res, "elect: "+err.Error())
	case errors.Is(err, redlock.ErrUnavailable):
		res.Outcome, res.ExitCode = "error", exitUnavailable
		return finishElect(e, c, res, "elect: "+err.Error())
	case errors.Is(err, redlock.ErrLockLost):
		res.Outcome, res.ExitCode = "lost", exitLost
		return finishElect(e, c, res, "elect: "+err.Error())
	case err != nil:
		res.Outcome, res.ExitCode = "error", exitSoftware
		return finishElect(e, c, res, "elect: "+err.Error())
	}
	// The term is 0 when the leadership ended already: lost at once.
	lead := el.Context()
	res.Elected, res.Term = true, el.Term()
	if res.Term != 0 {
		printLeader(e, c, leaderLine{Name: el.Name(), Term: res.Term, Value: value})
	}
	select {
	case <-sigs:
		if lead.Err() == nil { // else it was lost first: say so
			resign(e, c, el, true)
			res.Outcome, res.ExitCode = "resigned", exitOK
			return finishElect(e, c, res, "")
		}
	case <-lead.Done():
	}
	resign(e, c, el, false) // releases what is left of the lock
	res.Outcome, res.ExitCode = "lost", exitLost
	return finishElect(e, c, res, fmt.Sprintf("elect: lost the leadership of %q (term %d): %v", el.Name(), res.Term, context.Cause(lead)))
}

// resign gives up el's leadership, bounded by keeperTimeout; a master that
// misses it keeps the lock until its TTL ends there. warn: say so on
// stderr when it fails (not after a loss, which elect reports itself).
func resign(e env, c *common, el *redlock.Election, warn bool) {
	ctx, cancel := context.WithTimeout(context.Background(), keeperTimeout(c))
	defer cancel()
	if err := el.Resign(ctx); err != nil && warn {
		e.warnf("elect: resigning %q: %v (the leadership ends when its TTL runs out)", el.Name(), err)
	}
}

// printLeader prints a leader line on stdout: text, or one line of JSON.
func printLeader(e env, c *common, l leaderLine) {
	if c.json {
		b, _ := json.Marshal(l)
		fmt.Fprintf(e.stdout, "%s\n", b)
		return
	}
	fmt.Fprintf(e.stdout, "%s term=%d value=%s\n", quoteField(l.Name), l.Term, quoteField(l.Value))
}

// finishElect prints msg (if any) or, with --json, the result on stderr,
// and returns the exit status.
func finishElect(e env, c *common, res electResult, msg string) int {
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
