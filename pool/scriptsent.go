package pool

import "github.com/quorumlock/quorumlock/nodeutil"

// Scripts on a pipelined connection. The first EVALSHA of each script on
// a connection goes as EVAL, with the source, which runs it and caches it
// on the master for the EVALSHAs behind it. A master's script cache is
// empty after every restart, which is also when its connections are new:
// so a lock call on a fresh connection takes one round trip, not an
// EVALSHA answered NOSCRIPT and then the EVAL (which under a short node
// timeout fails the first attempts after a restart). NOSCRIPT is then left
// to a SCRIPT FLUSH on a live connection, after which the EVAL goes again
// as mux.finish says (call.go).

// scriptsSent is the SHA1 hex digests of the scripts a connection sent
// as EVAL. Only its writer (one goroutine at a time) uses it.
type scriptsSent map[string]struct{}

// maxScriptsSent bounds a connection's scriptsSent for a Node that runs
// ever new scripts: past it the set starts again (each script then goes
// as EVAL once more). quorumlock itself uses about twenty.
const maxScriptsSent = 1024

// wire returns the command and arguments that r goes out with on the
// connection whose scripts are s: r's own, unless r is an EVALSHA whose
// script s has not sent yet, which goes as EVAL with the source. r is not
// changed: its arguments may be shared by other Nodes' calls, and a
// command handed back unsent goes through wire again on the next
// connection.
func (s *scriptsSent) wire(r *request) (string, []any) {
	if r.src == "" || len(r.args) == 0 || !layers.evalFirst {
		return r.cmd, r.args
	}
	hash, ok := r.args[0].(string)
	if !ok {
		return r.cmd, r.args
	}
	if _, sent := (*s)[hash]; sent {
		return r.cmd, r.args
	}
	if *s == nil {
		*s = make(scriptsSent)
	} else if len(*s) >= maxScriptsSent {
		clear(*s)
	}
	(*s)[hash] = struct{}{}
	return "EVAL", nodeutil.EvalArgs(r.src, r.args)
}
