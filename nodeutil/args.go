package nodeutil

import (
	"fmt"
	"strconv"
	"sync/atomic"
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
		return formatInt(int64(a))
	case int64:
		return formatInt(a)
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

// numbers memoises the decimal text of the integers that Nodes format
// again and again (a lock's TTL in milliseconds, its tombstone's lifetime:
// the same for every call of a Locker), so that formatting one costs no
// allocation once it is there: a small table, one value per slot, chosen
// by the value's hash. A slot holds the last value formatted in it;
// entries are immutable, so a reader sees a whole one or none.
var numbers [64]atomic.Pointer[number]

type number struct {
	v int64
	s string
}

// formatInt is strconv.FormatInt(v, 10), memoised (numbers).
func formatInt(v int64) string {
	if v >= 0 && v < 100 {
		return strconv.FormatInt(v, 10) // strconv's own strings: no allocation
	}
	slot := &numbers[uint64(v)*0x9e3779b97f4a7c15>>58]
	if n := slot.Load(); n != nil && n.v == v {
		return n.s
	}
	s := strconv.FormatInt(v, 10)
	slot.Store(&number{v, s})
	return s
}
