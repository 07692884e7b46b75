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
	if len(cmdArgs) < 2 {
		return "", nil, nil, fmt.Errorf("nodeutil: prepared EVALSHA with %d arguments, want the hash and the number of keys", len(cmdArgs))
	}
	s := AppendArgs(make([]string, 0, len(cmdArgs)), cmdArgs)
	nkeys, err := strconv.Atoi(s[1])
	if err != nil || nkeys < 0 || nkeys > len(s)-2 {
		return "", nil, nil, fmt.Errorf("nodeutil: prepared EVALSHA: bad number of keys %q", s[1])
	}
	return s[0], s[2 : 2+nkeys], s[2+nkeys:], nil
}
