package redlock

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"

	"github.com/quorumlock/quorumlock/quorum"
)

//go:embed scripts/*.lua
var scriptFiles embed.FS

var (
	releaseScript          = loadScript("release")
	extendScript           = loadScript("extend")
	fenceAcquireScript     = loadScript("fence_acquire")
	fenceRaiseScript       = loadScript("fence_raise")
	reentrantAcquireScript = loadScript("reentrant_acquire")
	reentrantExtendScript  = loadScript("reentrant_extend")
	reentrantReleaseScript = loadScript("reentrant_release")
	readAcquireScript      = loadScript("read_acquire")
	readExtendScript       = loadScript("read_extend")
	readReleaseScript      = loadScript("read_release")
	writeAcquireScript     = loadScript("write_acquire")
	writeReleaseScript     = loadScript("write_release")
	fairDrawScript         = loadScript("fair_draw")
	fairAcquireScript      = loadScript("fair_acquire")
	fairRefreshScript      = loadScript("fair_refresh")
	fairLeaveScript        = loadScript("fair_leave")
	fairReleaseScript      = loadScript("fair_release")
	multiAcquireScript     = loadScript("multi_acquire")
	multiExtendScript      = loadScript("multi_extend")
	multiReleaseScript     = loadScript("multi_release")
	resumeFencedScript     = loadScript("resume_fenced")
)

// script is a Lua script with its SHA1 digest, for EVALSHA.
type script struct {
	src, hash string
}

func loadScript(name string) script {
	src, err := scriptFiles.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	sum := sha1.Sum(src)
	return script{src: string(src), hash: hex.EncodeToString(sum[:])}
}

// call is one script invocation for a fan-out: its keys and arguments, and
// the EVALSHA argument list built from them once.
type call struct {
	s        script
	keys     []string
	args     []any
	prepared []any
}

func (s script) with(keys []string, args ...any) *call {
	prepared := make([]any, 0, 2+len(keys)+len(args))
	prepared = append(prepared, s.hash, len(keys))
	for _, k := range keys {
		prepared = append(prepared, k)
	}
	return &call{s: s, keys: keys, args: args, prepared: append(prepared, args...)}
}

// count runs the call on n; the script answers a count: > 0 is a yes
// carrying the count, 0 a no.
func (c *call) count(ctx context.Context, n Node) quorum.Vote {
	var reply any
	var err error
	if p, ok := n.(PreparedEvaler); ok {
		reply, err = p.EvalPrepared(ctx, c.s.src, c.prepared)
	} else {
		reply, err = n.Eval(ctx, c.s.hash, c.s.src, c.keys, c.args...)
	}
	return countVote(reply, err)
}

func countVote(reply any, err error) quorum.Vote {
	if err != nil {
		return quorum.Vote{Err: err}
	}
	c, ok := reply.(int64)
	if !ok || c < 0 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected script reply %v", reply)}
	}
	return quorum.Vote{Yes: c > 0, Value: c}
}
