package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// redlock and the guardian of its command talk over two pipes, one line
// per message, a verb and its argument:
//
//	redlock -> guardian (the guardian's fd 3)
//	  until NS       the lock's validity ends at NS (Unix nanoseconds)
//	  signal N       send signal N to the command's process group
//	  stop           the lock is lost: stop the command
//	  (end of file)  redlock is gone: stop the command, before the validity ends
//
//	guardian -> redlock (the guardian's fd 4)
//	  started PID    the command runs, as PID, the leader of process group PID
//	  failed S TEXT  the command could not be started; S is the shell's status (126, 127)
//	  exited S       the command (the leader) ended with status S (128+N for signal N)
//	  stopping WHY   the guardian began to stop the job: "validity" (no renewal
//	                 got through in time), "lost", "leftovers" (processes the
//	                 command left behind) or "orphaned" (redlock is gone)
//	  done           no process of the job is left
//
// The protocol is private to one binary: redlock starts the guardian from
// its own executable, with guardianProtocol as its first argument.
const guardianProtocol = "1"

// Verbs of the messages.
const (
	msgUntil    = "until"
	msgSignal   = "signal"
	msgStop     = "stop"
	msgStarted  = "started"
	msgFailed   = "failed"
	msgExited   = "exited"
	msgStopping = "stopping"
	msgDone     = "done"
)

// Reasons of a "stopping" message.
const (
	stopValidity  = "validity"
	stopLost      = "lost"
	stopLeftovers = "leftovers"
	stopOrphaned  = "orphaned"
)

// message is one line of the protocol.
type message struct {
	verb string
	arg  string
}

// int returns the message's first field as an integer.
func (m message) int() (int64, error) {
	first, _, _ := strings.Cut(m.arg, " ")
	return strconv.ParseInt(first, 10, 64)
}

// rest returns what follows the message's first field.
func (m message) rest() string {
	_, rest, _ := strings.Cut(m.arg, " ")
	return rest
}

// send writes one message. Its error is the caller's to ignore: a peer
// that is gone learns nothing more.
func send(w io.Writer, verb string, args ...any) error {
	line := verb
	if len(args) > 0 {
		line += " " + strings.TrimSuffix(fmt.Sprintln(args...), "\n")
	}
	line = strings.ReplaceAll(line, "\n", " ")
	_, err := io.WriteString(w, line+"\n")
	return err
}

// receive reads messages from r onto out until r ends, then closes out.
func receive(r io.Reader, out chan<- message) {
	defer close(out)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		verb, arg, _ := strings.Cut(sc.Text(), " ")
		out <- message{verb: verb, arg: arg}
	}
}

// sendUntil tells the guardian when the lock's validity ends. The moment
// crosses the process boundary as wall-clock time, converted back to the
// guardian's monotonic clock on arrival, so only a step of the wall clock
// during the transfer itself could shift it.
func sendUntil(w io.Writer, until time.Time) error {
	now := time.Now()
	return send(w, msgUntil, now.UnixNano()+int64(until.Sub(now)))
}

// untilOf reads an "until" message as a moment on this process's clock.
func untilOf(m message) (time.Time, error) {
	ns, err := m.int()
	if err != nil {
		return time.Time{}, fmt.Errorf("bad until %q: %v", m.arg, err)
	}
	now := time.Now()
	return now.Add(time.Duration(ns - now.UnixNano())), nil
}
