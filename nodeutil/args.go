package nodeutil

import (
	"fmt"
	"strconv"
)

// AppendArgs appends each argument formatted by FormatArg to dst.
func AppendArgs(dst []string, args []any) []string {
	for _, a := range args {
		dst = append(dst, FormatArg(a))
	}
	return dst
}

// FormatArg formats a command argument as redigo formats it, so that a
// Node over a client that takes strings sends what *pool.Node sends:
// strings and []byte as they are, integers in decimal, floats in the
// shortest form that reads back the same, bool as "1" or "0", nil as "",
// anything else with fmt.Sprint.
func FormatArg(a any) string {
	switch a := a.(type) {
	case string:
		return a
	case []byte:
		return string(a)
	case int:
		return strconv.Itoa(a)
	case int64:
		return strconv.FormatInt(a, 10)
	case int32:
		return strconv.FormatInt(int64(a), 10)
	case uint:
		return strconv.FormatUint(uint64(a), 10)
	case uint64:
		return strconv.FormatUint(a, 10)
	case uint32:
		return strconv.FormatUint(uint64(a), 10)
	case float64:
		return strconv.FormatFloat(a, 'g', -1, 64)
	case bool:
		if a {
			return "1"
		}
		return "0"
	case nil:
		return ""
	}
	return fmt.Sprint(a)
}
