package rueidis

import (
	"strings"

	"github.com/redis/rueidis"
)

// replyError is a Redis error reply with the master's message: rueidis
// drops the "ERR " prefix of a generic error reply ("ERR unknown command"
// becomes "unknown command"), and Error puts it back, so that a Node over
// rueidis reports errors as every other Node does. It unwraps to the
// *rueidis.RedisError.
type replyError struct{ *rueidis.RedisError }

func (e replyError) Unwrap() error { return e.RedisError }

// Error returns the message as the master sent it. Redis error replies
// begin with an upper-case error code (ERR, WRONGTYPE, NOSCRIPT, ...); a
// message that does not is one whose ERR rueidis removed.
func (e replyError) Error() string {
	msg := e.RedisError.Error()
	if isErrorCode(msg) {
		return msg
	}
	return "ERR " + msg
}

// isErrorCode reports whether msg begins with an error code: a word of
// upper-case letters, digits, '-' or '_', ended by a space or the end.
func isErrorCode(msg string) bool {
	word, _, _ := strings.Cut(msg, " ")
	if word == "" || word[0] < 'A' || word[0] > 'Z' {
		return false
	}
	for _, r := range word {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_' {
			return false
		}
	}
	return true
}
