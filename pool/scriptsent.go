package pool

// Scripts on a pipelined connection. An EVALSHA that the master answers
// NOSCRIPT goes again as EVAL (see mux.finish), queued behind whatever was
// written after it. On one connection that reorders: a release written
// behind a pending acquire script (redlock does so once the acquire's node
// timeout passed, trusting the connection's order) would run first, find
// nothing, and the acquire would land after it and hold the key on that
// master until its TTL. A master's script cache is empty after every
// restart, which is also when its connections are new; so the first
// EVALSHA of each script on a connection goes as EVAL, with the source,
// which runs it and caches it on the master for the EVALSHAs behind it.
// NOSCRIPT is then left to a SCRIPT FLUSH on a live connection (or a
// proxy that moved it to another master), and there the EVAL goes only
// while the caller still waits for it (mux.finish).

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
	if r.src == "" || len(r.args) == 0 {
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
	return "EVAL", evalArgs(r.src, r.args)
}

// evalArgs turns an EVALSHA argument list (digest, key count, keys,
// arguments) into EVAL's, with src in the digest's place, in a new slice:
// the list may be shared by other Nodes' calls.
func evalArgs(src string, shaArgs []any) []any {
	args := make([]any, len(shaArgs))
	args[0] = src
	copy(args[1:], shaArgs[1:])
	return args
}
