package nodeutil

import (
	"errors"
	"fmt"
	"strings"
)

// A Node's connections are shared: by every concurrent caller at once on a
// pipelined connection, by one caller after another in a pool. A command
// that changes the state of its connection (a transaction, the database,
// the reply mode, a subscription, the user) would change it for the others:
// after CLIENT REPLY SKIP the master answers no more for two commands, and
// every later reply goes to the command two places earlier (a refused SET
// NX receives another command's OK); after a MULTI, a concurrent lock
// script is QUEUED instead of run. Such commands are refused before
// anything is sent. Blocking commands (BLPOP, XREAD BLOCK, WAIT, ...) are
// refused on a pipelined connection, where one of them would hold up the
// replies of every other caller.

// ErrConnState is the error of a call whose command would change the state
// of a shared connection; nothing was sent. Match it with errors.Is.
var ErrConnState = errors.New("command changes the state of a shared connection")

// ErrBlocking is the error of a blocking command on a shared pipelined
// connection; nothing was sent.
var ErrBlocking = errors.New("blocking command on a shared pipelined connection")

// stateful are the commands refused on every shared connection, in upper
// case.
var stateful = map[string]bool{
	"MULTI": true, "EXEC": true, "DISCARD": true, "WATCH": true, "UNWATCH": true,
	"SELECT": true, "RESET": true, "HELLO": true, "AUTH": true, "QUIT": true,
	"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true,
	"UNSUBSCRIBE": true, "PUNSUBSCRIBE": true, "SUNSUBSCRIBE": true,
	"MONITOR": true, "READONLY": true, "READWRITE": true, "ASKING": true,
	"SYNC": true, "PSYNC": true, "REPLCONF": true,
}

// statefulClient are the CLIENT subcommands refused on every shared
// connection.
var statefulClient = map[string]bool{"REPLY": true, "TRACKING": true, "CACHING": true, "NO-EVICT": true, "NO-TOUCH": true}

// blocking are the commands that may block the connection, refused on a
// pipelined one. XREAD and XREADGROUP block only with BLOCK.
var blocking = map[string]bool{
	"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true,
	"BZPOPMIN": true, "BZPOPMAX": true, "BZMPOP": true, "WAIT": true, "WAITAOF": true,
}

// CheckShared returns an error matching ErrConnState, or ErrBlocking when
// pipelined, naming the command, when cmd with args must not go out on a
// shared connection; nil otherwise. cmd and each argument are judged by
// the text that goes on the wire (WireText), so that no Go type (a named
// string type, a redis.Argument, a fmt.Stringer) slips a refused command
// through.
func CheckShared(cmd string, args []any, pipelined bool) error {
	name := strings.ToUpper(cmd)
	switch {
	case stateful[name]:
	case name == "CLIENT" && len(args) > 0 && statefulClient[strings.ToUpper(WireText(args[0]))]:
		name += " " + strings.ToUpper(WireText(args[0]))
	case pipelined && (blocking[name] || (name == "XREAD" || name == "XREADGROUP") && hasArg(args, "BLOCK")):
		return fmt.Errorf("%w: %s", ErrBlocking, name)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrConnState, name)
}

// hasArg reports whether one of args is word on the wire, in any case.
func hasArg(args []any, word string) bool {
	for _, a := range args {
		if strings.EqualFold(WireText(a), word) {
			return true
		}
	}
	return false
}

// WireText is the text that a command argument goes on the wire as: what
// FormatArg makes of it, after a value with a RedisArg method (redigo's
// redis.Argument) has been asked for its own (once), as redigo does.
func WireText(arg any) string { return wireText(arg, true) }

// argument is redigo's redis.Argument (and any type like it): a value that
// tells its own wire form.
type argument interface{ RedisArg() any }

func wireText(arg any, argumentOK bool) string {
	if a, ok := arg.(argument); ok && argumentOK {
		return wireText(a.RedisArg(), false)
	}
	return FormatArg(arg)
}
