package rueidis

import (
	"fmt"
	"strconv"
)

// appendArgs appends each argument formatted as redigo formats it, so that
// a Node over rueidis sends what *pool.Node sends: strings and []byte as
// they are, integers in decimal, floats in the shortest form that reads
// back the same, bool as "1" or "0", nil as "", anything else with
// fmt.Sprint.
func appendArgs(dst []string, args []any) []string {
	for _, a := range args {
		dst = append(dst, formatArg(a))
	}
	return dst
}

func formatArg(a any) string {
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
