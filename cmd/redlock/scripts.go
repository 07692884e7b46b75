package main

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// The scripts redlock runs on the masters. Those that judge whether a key
// is lock state share shape.lua's definition of it, put in front of them.
var (
	//go:embed shape.lua
	shapeSrc string
	//go:embed state.lua
	stateBody string
	//go:embed force.lua
	forceBody string
	//go:embed unlock.lua
	unlockBody string

	stateSrc  = reservedSrc + shapeSrc + stateBody
	forceSrc  = reservedSrc + shapeSrc + forceBody
	unlockSrc = reservedSrc + shapeSrc + unlockBody
)

// reservedSrc names, for shape.lua, the keys that are the library's own
// memory on a master and never a lock, by the end of their names (the key
// prefix goes in front): the restart guard's record and the durable
// confirmations' probe, as redlock/layout names them; and the most bytes
// of fields a holder record carries (redlock.MaxMetadataLen).
var reservedSrc = fmt.Sprintf("local RESERVED = {[%q] = %q, [%q] = %q}\nlocal MAX_METADATA = %d\n",
	layout.Registry(""), "the restart guard's record", layout.Probe(""), "the durable confirmations' probe",
	redlock.MaxMetadataLen)

// eval runs the script src on n with EVAL, its full text each time: redlock
// computes no SHA-1 digest (EVALSHA's), which GODEBUG=fips140=only forbids.
// Its scripts are short and run once or once a renewal.
func eval(ctx context.Context, n *pool.Node, src string, keys []string, args ...any) (any, error) {
	cmd := make([]any, 0, 2+len(keys)+len(args))
	cmd = append(cmd, src, len(keys))
	for _, k := range keys {
		cmd = append(cmd, k)
	}
	return n.Do(ctx, "EVAL", append(cmd, args...)...)
}
