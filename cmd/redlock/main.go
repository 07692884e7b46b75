package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Exit statuses of redlock itself. A command run by "redlock run" that ends
// while the lock held exits with its own status instead.
const (
	exitOK = 0
	// exitConflict is the default of -E: the lock is held by someone else
	// (run), doctor found a broken safety condition, or unlock found
	// nothing to remove.
	exitConflict = 1
	// exitNotLock: unlock left a key alone because it holds something no
	// lock writes (EX_DATAERR).
	exitNotLock = 65
	// exitUsage: a bad flag or argument, or a missing or malformed node
	// list (sysexits EX_USAGE).
	exitUsage = 64
	// exitUnavailable: fewer masters than a quorum answer (EX_UNAVAILABLE).
	exitUnavailable = 69
	// exitSoftware: an unexpected failure inside redlock (EX_SOFTWARE).
	exitSoftware = 70
	// exitLost: the lock was lost while the command ran, and the command
	// was stopped (EX_TEMPFAIL: the job may be run again); or elect's
	// leadership was lost.
	exitLost = 75
	// exitCannotExec and exitNotFound: the command could not be started,
	// as in a shell.
	exitCannotExec = 126
	exitNotFound   = 127
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == guardianCommand {
		os.Exit(runGuardian(os.Args[2:]))
	}
	os.Exit(cli(os.Args[1:], env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}))
}

// env is what a subcommand talks to: the standard streams and the
// environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// failf prints one line "redlock: ..." on stderr and returns code.
func (e env) failf(code int, format string, args ...any) int {
	msg := fmt.Sprintf(format, args...)
	msg = strings.Join(strings.Fields(msg), " ") // one line, whatever the error held
	fmt.Fprintf(e.stderr, "redlock: %s\n", msg)
	return code
}

// warnf prints one line "redlock: ..." on stderr, and goes on.
func (e env) warnf(format string, args ...any) { e.failf(exitOK, format, args...) }

// usageError prints a bad-usage line for subcommand name.
func (e env) usageError(name string, err error) int {
	return e.failf(exitUsage, "%s: %v (see redlock %s -h)", name, err, name)
}

const mainUsage = `usage: redlock COMMAND [flags] [args]

Redlock across N independent Redis masters, for the people who run jobs.

Commands:
  run      run a command while holding a lock (like flock(1))
  doctor   check each master against the safety conditions Redlock needs
  inspect  show who holds a key on each master
  unlock   release a holder's lock, or force a key free
  elect    campaign for leadership of an election, or watch its leaders
  version  print redlock's version and its module's

Masters come from --nodes or, when it is absent, REDLOCK_NODES: a comma-
separated list of host:port or redis://[user:password@]host:port[/db]
(rediss:// for TLS).

Example:
  export REDLOCK_NODES=redis-a:6379,redis-b:6379,redis-c:6379
  redlock run -n nightly-export -- /usr/local/bin/export --all

Run "redlock COMMAND -h" for a command's flags.
`

// cli runs redlock with args (without the program name) and returns the
// exit status.
func cli(args []string, e env) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, mainUsage)
		return exitUsage
	}
	switch args[0] {
	case "run":
		return cmdRun(args[1:], e)
	case "doctor":
		return cmdDoctor(args[1:], e)
	case "inspect":
		return cmdInspect(args[1:], e)
	case "unlock":
		return cmdUnlock(args[1:], e)
	case "elect":
		return cmdElect(args[1:], e)
	case "version", "--version":
		return cmdVersion(args[1:], e)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(e.stdout, mainUsage)
		return exitOK
	}
	return e.failf(exitUsage, "unknown command %q (want run, doctor, inspect, unlock, elect or version; see redlock -h)", args[0])
}
