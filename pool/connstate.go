package pool

import (
	"errors"
	"fmt"
	"strings"
)

// A Node's connections are shared: by every concurrent caller at once in
// the pipelined mode, by one caller after another in the Pooled mode. A
// command that changes the state of its connection (a transaction, the
// database, the reply mode, a subscription, the user) would change it for
// the others: after a MULTI, a concurrent lock script is QUEUED instead of
// run. Such commands are refused before anything is sent, in both modes:
// one Do call has its connection for that one command only, so a state
// change could serve nobody, and either redigo undoes it when the pooled
// connection is released (MULTI, WATCH, SUBSCRIBE) or it leaks into the
// pool (SELECT, CLIENT REPLY, RESET, HELLO, AUTH, READONLY).
//
// Blocking commands (BLPOP, XREAD BLOCK, WAIT, ...) are refused on the
// pipelined connection, where one of them would hold up the replies of
// every other caller until it returns or the stall timeout closes the
// connection; Config.Pooled runs them on a connection of their own.

// ErrConnState is the error of a call whose command would change the
// state of a shared connection; nothing was sent. Match it with errors.Is.
var ErrConnState = errors.New("pool: command changes the state of a shared connection")

// ErrBlocking is the error of a blocking command on the pipelined shared
// connection; nothing was sent. Config.Pooled allows them.
var ErrBlocking = errors.New("pool: blocking command on the shared pipelined connection (use Config.Pooled)")

// stateful are the commands refused in every mode, in upper case.
var stateful = map[string]bool{
	"MULTI": true, "EXEC": true, "DISCARD": true, "WATCH": true, "UNWATCH": true,
	"SELECT": true, "RESET": true, "HELLO": true, "AUTH": true, "QUIT": true,
	"SUBSCRIBE": true, "PSUBSCRIBE": true, "SSUBSCRIBE": true,
	"UNSUBSCRIBE": true, "PUNSUBSCRIBE": true, "SUNSUBSCRIBE": true,
	"MONITOR": true, "READONLY": true, "READWRITE": true, "ASKING": true,
	"SYNC": true, "PSYNC": true, "REPLCONF": true,
}

// statefulClient are the CLIENT subcommands refused in every mode.
var statefulClient = map[string]bool{"REPLY": true, "TRACKING": true, "CACHING": true}

// blocking are the commands that may block the connection, refused on the
// pipelined connection. XREAD and XREADGROUP block only with BLOCK.
var blocking = map[string]bool{
	"BLPOP": true, "BRPOP": true, "BRPOPLPUSH": true, "BLMOVE": true, "BLMPOP": true,
	"BZPOPMIN": true, "BZPOPMAX": true, "BZMPOP": true, "WAIT": true, "WAITAOF": true,
}

// checkShared returns ErrConnState or ErrBlocking (wrapped with the
// command) when cmd must not go out on a shared connection.
func checkShared(cmd string, args []any, pipelined bool) error {
	name := strings.ToUpper(cmd)
	switch {
	case stateful[name]:
	case name == "CLIENT" && len(args) > 0 && statefulClient[strings.ToUpper(argString(args[0]))]:
		name += " " + strings.ToUpper(argString(args[0]))
	case pipelined && (blocking[name] || (name == "XREAD" || name == "XREADGROUP") && hasArg(args, "BLOCK")):
		return fmt.Errorf("%w: %s", ErrBlocking, name)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s", ErrConnState, name)
}

// argString returns a string or []byte argument as a string, "" otherwise.
func argString(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// hasArg reports whether one of args is word, in any case.
func hasArg(args []any, word string) bool {
	for _, a := range args {
		if strings.EqualFold(argString(a), word) {
			return true
		}
	}
	return false
}
