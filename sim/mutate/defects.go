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
// included) or quorum, and none in what the simulator's workloads never
// call: the election (election*.go) and the holder read (holder.go),
// which the chaos suite's election scenario drives.
func InScope(d mutation.Defect) bool {
	for _, e := range d.Edits {
		if !strings.HasPrefix(e.File, "redlock/") && !strings.HasPrefix(e.File, "quorum/") {
			return false
		}
		if strings.HasPrefix(e.File, "redlock/election") || e.File == "redlock/holder.go" {
			return false
		}
	}
	return len(d.Edits) > 0
}

// Defects returns the defects to run: chaos/mutation's in scope, then the
// simulator's own (Extra) whose names chaos/mutation does not have, or
// has with anchors gone stale in the tree at root, then the blind-area
// defects (Blind).
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
			have[d.Name] = true
		}
	}
	for _, d := range Blind() {
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
		// The three findings the simulator made on the unmodified library
		// and that were fixed since (sim/README): each defect brings one
		// back, and the default exploration must see it.
		{
			Name:        "renewal-timed-from-grant",
			Description: "the watchdog renews a third of the TTL after the last round returned, not when two thirds are left before Until: a round that took most of the TTL leaves the renewal after Until, and the lock is lost on healthy masters",
			Edits: []mutation.Edit{{File: "redlock/renew.go",
				Anchor:  "\treturn max(left-(lk.ttl-every), 0)\n",
				Replace: "\t_ = left\n\treturn every\n"}},
		},
		{
			Name:        "resume-fence-unseeded",
			Description: "a fenced Resume takes the masters' counters as they are, not seeded from their clocks: after a failover to a replica that missed the giver's write-back, the resumed token comes out below the giver's",
			Edits: []mutation.Edit{{File: "redlock/scripts/resume_fenced.lua",
				Anchor:  "tonumber(t[1]) * 1000000 + tonumber(t[2]))",
				Replace: "1)"}},
		},
		{
			Name:        "nested-fence-unseeded",
			Description: "a reentrant owner's nested hold takes the masters' counters as they are, not seeded from their clocks: after a failover to a replica that missed the first hold's write-back, the nested token comes out below the first hold's",
			Edits: []mutation.Edit{{File: "redlock/scripts/reentrant_acquire.lua",
				Anchor:  "  return math.max(f, now)\n",
				Replace: "  return f\n"}},
		},
		{
			Name:        "release-retry-first-ttl",
			Description: "Unlock retries a failed release, and its tombstone lives, for the TTL the lock was acquired with, not the longest an Extend sent: after an Extend to a longer TTL, a release lost in a partition stops being sent while the key lives on",
			Edits: []mutation.Edit{{File: "redlock/lock.go",
				Anchor:  "longest := max(lk.ttl, lk.longest)",
				Replace: "longest := lk.ttl"}},
		},
	}
}

// Blind are defects placed where the chaos suite's mutation self-test has
// none (issue 32): one or more in each area its defects leave out, each a
// bug someone could plausibly write. They measure where the simulator's
// proof is blind; they are not chaos/mutation's (whose list runs in CI
// and must stay all caught), and the README's power table says which of
// them the simulator catches. Areas: (1) Extends with different TTLs
// racing each other; (2) multi-key and read holds whose keys partly
// expired before an Extend; (3) counters (fencing, fair tickets) that
// differ between masters; (4) a command held up longer than a lock's TTL
// or the node timeout; (5) the library's own retries with a command in
// flight (something runs twice); (6) durability combined with the restart
// guard; (7) the number of times a failed release is retried; (8) what a
// write lock's release leaves for waiting writers.
func Blind() []mutation.Defect {
	return []mutation.Defect{
		// (1) Extends with different TTLs racing each other.
		{
			Name:        "extend-cap-longest",
			Description: "(1) an Extend counts a granting master as keeping the key for the longer of its TTL and an earlier Extend's whose outcome there is unknown, not the shorter: the earlier, shorter Extend lands late and cuts the key under Until",
			Edits: []mutation.Edit{{File: "redlock/extend.go",
				Anchor:  "\t\t\t\tk = min(k, caps[i])\n",
				Replace: "\t\t\t\tk = max(k, caps[i])\n"}},
		},
		{
			Name:        "extend-unknown-resolved-on-error",
			Description: "(1) an Extend whose call to a master failed (given up at the node timeout, a reset) counts as resolved there, as if it could no longer land: a later, longer Extend trusts that master for its whole TTL while the shorter one may still land",
			Edits: []mutation.Edit{{File: "redlock/extend.go",
				Anchor:  "\t\tif v.Err == nil { // it ran on master i: known from now on\n",
				Replace: "\t\tif true { // it answered, one way or the other: known from now on\n"}},
		},
		// (2) Multi-key and read holds whose keys partly expired.
		{
			Name:        "multi-extend-skips-last-key",
			Description: "(2) the multi-key extend's PEXPIRE loop stops one key short (KEYS[1] is the tombstone, so the loop's bound is taken for #KEYS-1): the last key keeps its old TTL and expires while Until says the whole set is held",
			Edits: []mutation.Edit{{File: "redlock/scripts/multi_extend.lua",
				Anchor:  "for i = 2, #KEYS do\n  redis.call('PEXPIRE', KEYS[i], ARGV[2])\nend",
				Replace: "for i = 2, #KEYS - 1 do\n  redis.call('PEXPIRE', KEYS[i], ARGV[2])\nend"}},
		},
		{
			Name:        "read-extend-counts-absent",
			Description: "(2) a reader's extend drops its membership test (ZADD XX never re-adds a reader, so the test looks redundant) and answers yes where the reader expired or never landed: an Extend succeeds on masters that no longer hold the reader",
			Edits: []mutation.Edit{{File: "redlock/scripts/read_extend.lua",
				Anchor:  "if not redis.call('ZSCORE', KEYS[3], ARGV[1]) or redis.call('EXISTS', KEYS[2]) == 1 then",
				Replace: "if redis.call('EXISTS', KEYS[2]) == 1 then"}},
		},
		// (3) Counters that differ between masters.
		{
			Name:        "fence-first-grant",
			Description: "(3) the fencing token is the counter of the first master that granted (the counters are taken to agree), not the quorum's maximum: counters apart by the masters' clocks give a token below the previous holder's",
			Edits: []mutation.Edit{{File: "redlock/fence.go",
				Anchor:  "\t\t\tfence = max(fence, v.Value.(int64))\n",
				Replace: "\t\t\tif fence == 0 { // the counters agree: any one is the token\n\t\t\t\tfence = v.Value.(int64)\n\t\t\t}\n"}},
		},
		{
			Name:        "fair-ticket-first-answer",
			Description: "(3) a fair waiter's ticket is the counter of the first master that answered its draw, not the quorum's maximum: a master whose counter lags (it missed draws) gives a later waiter a ticket below an earlier one's",
			Edits: []mutation.Edit{{File: "redlock/fair.go",
				Anchor:  "\t\t\t\t\tticket = max(ticket, v.Value.(int64))\n",
				Replace: "\t\t\t\t\tif ticket == 0 { // the counters agree: any one is the ticket\n\t\t\t\t\t\tticket = v.Value.(int64)\n\t\t\t\t\t}\n"}},
		},
		// (4) A command held up longer than a lock's TTL (or the node timeout).
		{
			Name:        "tombstone-lives-ttl",
			Description: "(4) a tombstone lives the lock's TTL only, not at least a minute: an acquire held up in the network for longer than the TTL lands after its release's tombstone expired and sets the key with no holder",
			Edits: []mutation.Edit{{File: "redlock/variant.go",
				Anchor:  "func tombMS(ttl time.Duration) int64 { return max(ttl, tombstoneLife).Milliseconds() }",
				Replace: "func tombMS(ttl time.Duration) int64 { return ttl.Milliseconds() }"}},
		},
		{
			Name:        "failed-attempt-releases-granted-only",
			Description: "(4) a failed attempt releases only the masters that granted it, not those that did not answer in time: an acquire held up past the node timeout lands later, with no release and no tombstone, and keeps the key for its TTL",
			Edits: []mutation.Edit{{File: "redlock/variant.go",
				Anchor:  "\treturn !answered || vote.Yes || vote.Err != nil\n",
				Replace: "\treturn answered && vote.Yes\n"}},
		},
		// (5) The library's own retries with a command in flight.
		{
			Name:        "attempt-token-reused",
			Description: "(5) a Lock call keeps one token for all its attempts (one identity per call): a failed attempt's release, given up at the node timeout and still on its way, lands after the next attempt's grant and deletes it on that master, or its tombstone refuses the next attempt",
			Edits: []mutation.Edit{{File: "redlock/options.go",
				Anchor:  "\tif c.token == nil {\n\t\treturn randomToken(), nil\n\t}",
				Replace: "\tif c.token == nil {\n\t\tif prev != \"\" {\n\t\t\treturn prev, nil // one identity per Lock call\n\t\t}\n\t\treturn randomToken(), nil\n\t}"}},
		},
		// (6) Durability combined with the restart guard.
		{
			Name:        "recheck-skips-confirm",
			Description: "(6) a grant judged again after its master's verdict went stale (the master restarted: the first grant of its new process) is delivered without its durable confirmation: with Config.Durability it counts before it is on disk or on the replica",
			Edits: []mutation.Edit{{File: "redlock/guard.go",
				Anchor:  "\tcase v.Yes && s.c.confirms:\n\t\tm.confirm(s, v)\n\t\treturn\n",
				Replace: ""}},
		},
		{
			Name:        "guard-trusts-durable-grants",
			Description: "(6) with Config.Durability the restart guard does not hold a restarted master's acquires back (its grants are confirmed durable, so holding it back looks pointless): but what it lost are other grants, made before its restart",
			Edits: []mutation.Edit{{File: "redlock/guard.go",
				Anchor:  "\tcase c.acquire && time.Now().Before(vd.countFrom):\n",
				Replace: "\tcase c.acquire && !c.confirms && time.Now().Before(vd.countFrom):\n"}},
		},
		// (7) How many times a failed release is retried.
		{
			Name:        "release-retries-capped",
			Description: "(7) a failed release is sent again at most twice (the bound trimmed to spare a struggling master): a release lost for longer than three node timeouts is never sent again, and the key stays until its TTL",
			Edits: []mutation.Edit{{File: "redlock/retry.go",
				Anchor:  "const maxReleaseRetries = 8",
				Replace: "const maxReleaseRetries = 2"}},
		},
		// (8) What a write lock's release leaves for waiting writers.
		{
			Name:        "write-release-keeps-mark",
			Description: "(8) a writer's release deletes the writer key only, not its own waiting mark (left on a master that still had readers when it won on the others): readers and other writers stay refused there for the writer's TTL",
			Edits: []mutation.Edit{{File: "redlock/scripts/write_release.lua",
				Anchor:  "if redis.call('GET', KEYS[4]) == ARGV[4] then\n  redis.call('DEL', KEYS[4])\nend\n",
				Replace: ""}},
		},
		{
			Name:        "write-release-clears-others-mark",
			Description: "(8) a writer's release deletes whatever waiting mark it finds, another waiting writer's too: readers get in ahead of the writer that waits (writer preference lost), and a writer behind it may wait out a stream of readers",
			Edits: []mutation.Edit{{File: "redlock/scripts/write_release.lua",
				Anchor:  "if redis.call('GET', KEYS[4]) == ARGV[4] then\n  redis.call('DEL', KEYS[4])\nend\n",
				Replace: "if redis.call('EXISTS', KEYS[4]) == 1 then\n  redis.call('DEL', KEYS[4])\nend\n"}},
		},
	}
}
