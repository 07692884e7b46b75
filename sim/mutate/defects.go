// Package mutate runs the chaos suite's mutation self-test against the
// simulator: each defect of chaos/mutation that lives in the library's
// core (redlock, quorum, the Lua scripts) is applied to a copy of the
// tree with chaos/mutation's own API (CopyTree, Defect.Apply), the
// simulator is built from the copy, and it explores until a schedule
// fails or the budget runs out. Defects of the transports (pool,
// nodeutil's shared-connection checks) and of the command are out of its
// reach: the simulator replaces the transport with its own Node.
package mutate

import (
	"strings"

	"github.com/quorumlock/quorumlock/chaos/mutation"
)

// InScope reports whether every edit of d lives in redlock (its scripts
// included) or quorum.
func InScope(d mutation.Defect) bool {
	for _, e := range d.Edits {
		if !strings.HasPrefix(e.File, "redlock/") && !strings.HasPrefix(e.File, "quorum/") {
			return false
		}
	}
	return len(d.Edits) > 0
}

// Defects returns the defects to run: chaos/mutation's in scope, then the
// simulator's own (Extra) whose names chaos/mutation does not have, or
// has with anchors gone stale in the tree at root.
func Defects(root string) []mutation.Defect {
	var out []mutation.Defect
	have := map[string]bool{}
	for _, d := range mutation.Defects() {
		if !InScope(d) {
			continue
		}
		if d.Check(root) != nil && hasExtra(d.Name) {
			continue // the extra of the same name is anchored at this tree
		}
		out = append(out, d)
		have[d.Name] = true
	}
	for _, d := range Extra() {
		if !have[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

func hasExtra(name string) bool {
	for _, d := range Extra() {
		if d.Name == name {
			return true
		}
	}
	return false
}

// Extra are defects the simulator adds to chaos/mutation's list: those of
// its defects in scope whose anchors the library's changes made stale
// (anchored again on the tree this was written against, with the same
// meaning), and identity rounding, which the chaos suite meets only by
// chance. They belong in chaos/mutation; until they are there, they live
// here.
func Extra() []mutation.Defect {
	return []mutation.Defect{
		{
			Name:        "validity-ignores-elapsed",
			Description: "a lock's validity is TTL - drift, not counting the time the attempt took",
			Edits: []mutation.Edit{{File: "redlock/attempt.go",
				Anchor:  "return start.Add(ttl - drift), ttl-l.clock.Now().Sub(start)-drift > 0",
				Replace: "return start.Add(ttl - drift), ttl-drift > 0"}},
		},
		{
			Name:        "guard-ignored",
			Description: "the restart guard counts every grant: a master that restarted empty is trusted at once (issue 23 item 1)",
			Edits: []mutation.Edit{{File: "redlock/guard.go",
				Anchor:  "\tif !v.Yes || !g.on {\n\t\treturn v, false\n\t}",
				Replace: "\tif _ = g; true {\n\t\treturn v, false\n\t}"}},
		},
		{
			Name:        "grant-before-durable",
			Description: "a grant counts at once, before the master confirmed it durable (issue 23 items 3-4)",
			Edits: []mutation.Edit{
				{File: "redlock/master.go",
					Anchor:  "\tif v.Yes && c.confirms {\n\t\tm.confirm(s, v)",
					Replace: "\tif v.Yes && c.confirms && false {\n\t\tm.confirm(s, v)"},
				{File: "redlock/guard.go",
					Anchor:  "\tcase v.Yes && s.c.confirms:",
					Replace: "\tcase v.Yes && s.c.confirms && false:"},
			},
		},
		{
			Name:        "guard-ignores-extends",
			Description: "the default restart guard lasts the longest TTL acquired with, not extended to: an Extend neither raises it nor waits for the records to cover it",
			Edits: []mutation.Edit{{File: "redlock/extend.go",
				Anchor:  "\tl.prepare(ctx, c.grant)\n",
				Replace: "\tl.prepare(ctx, 1)\n"}},
		},
		{
			Name:        "guard-ignores-acquires",
			Description: "the default restart guard lasts the longest TTL extended or resumed to, not acquired with: an acquire neither raises it nor waits for the records to cover it",
			Edits: []mutation.Edit{{File: "redlock/attempt.go",
				Anchor:  "\tl.prepare(ctx, c.grant)\n",
				Replace: "\tl.prepare(ctx, map[bool]int64{true: 1, false: c.grant}[c.acquire])\n"}},
		},
		{
			Name:        "identity-rounding",
			Description: "a master's start is taken as now - uptime, the earliest it can be, not the latest (uptime_in_seconds counts whole seconds): the restart guard lets a restarted master count up to a second early",
			Edits: []mutation.Edit{{File: "nodeutil/identity.go",
				Anchor:  "Started:     now.Add(time.Second - time.Duration(uptime)*time.Second),",
				Replace: "Started:     now.Add(-time.Duration(uptime) * time.Second),"}},
		},
	}
}
