package redlock

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"fmt"
)

var (
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/extend.lua
	extendSrc string

	releaseScript = newScript(releaseSrc)
	extendScript  = newScript(extendSrc)
)

// script is a Lua script with its SHA1 digest, for EVALSHA.
type script struct {
	src, hash string
}

func newScript(src string) script {
	sum := sha1.Sum([]byte(src))
	return script{src: src, hash: hex.EncodeToString(sum[:])}
}

func (s script) eval(ctx context.Context, n Node, keys []string, args ...any) (any, error) {
	return n.Eval(ctx, s.hash, s.src, keys, args...)
}

// evalFlag runs a script that answers 1 (yes) or 0 (no).
func (s script) evalFlag(ctx context.Context, n Node, keys []string, args ...any) (bool, error) {
	reply, err := s.eval(ctx, n, keys, args...)
	if err != nil {
		return false, err
	}
	switch reply {
	case int64(1):
		return true, nil
	case int64(0):
		return false, nil
	}
	return false, fmt.Errorf("redlock: unexpected script reply %v", reply)
}
