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

func (s script) eval(ctx context.Context, n Node, keys []string, args ...any) (any, error) {
	return n.Eval(ctx, s.hash, s.src, keys, args...)
}

// evalCount runs a script that answers a count: > 0 is a yes carrying the
// count, 0 a no.
func (s script) evalCount(ctx context.Context, n Node, keys []string, args ...any) quorum.Vote {
	reply, err := s.eval(ctx, n, keys, args...)
	if err != nil {
		return quorum.Vote{Err: err}
	}
	c, ok := reply.(int64)
	if !ok || c < 0 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected script reply %v", reply)}
	}
	return quorum.Vote{Yes: c > 0, Value: c}
}
