package nodeutil

import (
	"fmt"
	"strconv"
)

// SplitPrepared takes apart the argument list of a prepared script call
// (redlock.PreparedEvaler's cmdArgs: the script's SHA1 hex digest, the
// number of keys, the keys, then the arguments), each formatted by
// FormatArg. It only reads cmdArgs.
func SplitPrepared(cmdArgs []any) (hash string, keys, args []string, err error) {
	s, nkeys, err := appendPrepared(make([]string, 0, len(cmdArgs)), cmdArgs)
	if err != nil {
		return "", nil, nil, err
	}
	return s[0], s[2 : 2+nkeys], s[2+nkeys:], nil
}

// appendPrepared appends the argument list of a prepared script call,
// each formatted by FormatArg, to dst, and returns the number of keys.
func appendPrepared(dst []string, cmdArgs []any) (s []string, nkeys int, err error) {
	if len(cmdArgs) < 2 {
		return nil, 0, fmt.Errorf("nodeutil: prepared EVALSHA with %d arguments, want the hash and the number of keys", len(cmdArgs))
	}
	at := len(dst)
	s = AppendArgs(dst, cmdArgs)
	nkeys, err = strconv.Atoi(s[at+1])
	if err != nil || nkeys < 0 || nkeys > len(cmdArgs)-2 {
		return nil, 0, fmt.Errorf("nodeutil: prepared EVALSHA: bad number of keys %q", s[at+1])
	}
	return s, nkeys, nil
}
