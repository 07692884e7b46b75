package rueidis

import (
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/redis/rueidis"
)

// replyError is a Redis error reply with the master's message: rueidis
// drops the "ERR " prefix of a generic error reply ("ERR unknown command"
// becomes "unknown command"), and Error puts it back, so that a Node over
// rueidis reports errors as every other Node does. It unwraps to the
// *rueidis.RedisError.
type replyError struct{ *rueidis.RedisError }

func (e replyError) Unwrap() error { return e.RedisError }

// Error returns the message as the master sent it.
func (e replyError) Error() string { return nodeutil.ReplyMessage(e.RedisError.Error()) }
