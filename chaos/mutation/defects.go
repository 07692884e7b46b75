package mutation

// Defects returns the defects of the self-test: each path to two holders
// (or to a lock left behind) that issue 8 names, applied to the library as
// a small, plausible change. Scenarios lists the short scenarios expected
// to catch each one.
func Defects() []Defect {
	return []Defect{
		{
			Name:        "release-ignores-token",
			Description: "release deletes the lock key whoever holds it (no compare-and-delete)",
			Edits: []Edit{{File: "redlock/scripts/release.lua",
				Anchor:  "if redis.call('GET', KEYS[1]) == ARGV[1] then",
				Replace: "if redis.call('EXISTS', KEYS[1]) == 1 then"}},
			Scenarios: []string{"paused-holder", "safe-minority"},
		},
		{
			Name:        "quorum-half",
			Description: "the default quorum is N/2 instead of N/2+1 (2 of 5)",
			Edits: []Edit{{File: "redlock/config.go",
				Anchor:  "s.quorum = n/2 + 1\n\t}\n\tif s.quorum <= n/2 ||",
				Replace: "s.quorum = n / 2\n\t}\n\tif s.quorum < n/2 ||"}},
			Scenarios: []string{"majority-down"},
		},
		{
			Name:        "validity-ignores-elapsed",
			Description: "a lock's validity is TTL - drift, not counting the time the attempt took",
			Edits: []Edit{{File: "redlock/attempt.go",
				Anchor:  "validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)",
				Replace: "validity := ttl - clock.Drift(ttl, l.driftFactor)"}},
			Scenarios: []string{"paused-client"},
		},
		{
			Name:        "extend-recreates-key",
			Description: "Extend re-creates an expired lock key (SET PX) instead of only extending its own",
			Edits: []Edit{{File: "redlock/scripts/extend.lua",
				Anchor: "if redis.call('GET', KEYS[1]) == ARGV[1] then\n  return redis.call('PEXPIRE', KEYS[1], ARGV[2])\nend",
				Replace: "if redis.call('GET', KEYS[1]) == ARGV[1] or redis.call('EXISTS', KEYS[1]) == 0 then\n" +
					"  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n  return 1\nend"}},
			Scenarios: []string{"safe-extend"},
			Note:      "safe-extend's late-extend probe: an Extend sent over links slower than the TTL lands after the key expired; the key must not reappear",
		},
		{
			Name:        "fence-not-written-back",
			Description: "the fencing token (max of the quorum's counters) is not written back to the masters",
			Edits: []Edit{{File: "redlock/scripts/fence_raise.lua",
				Anchor:  "if c < v then",
				Replace: "if false then"}},
			Scenarios: []string{"paused-holder", "safe-mixed", "safe-extend", "safe-renew"},
			Note:      "shows as a repeated or lower token only when quorums differ, which is random: paused-holder rejects more writes than were late; safe-mixed, safe-extend and safe-renew (no kills) check that fences increase",
		},
		{
			Name:        "reentrant-ignores-owner",
			Description: "a reentrant acquire is granted even when another owner holds the hash",
			Edits: []Edit{{File: "redlock/scripts/reentrant_acquire.lua",
				Anchor:  "if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then",
				Replace: "if true then"}},
			Scenarios: []string{"safe-reentrant"},
			Note:      "safe-reentrant's drop-inner-unlock probe: another owner tries while the outer hold is valid",
		},
		{
			Name:        "reader-ignores-writer",
			Description: "a read lock is granted while a writer holds the lock (only a waiting writer blocks it)",
			Edits: []Edit{{File: "redlock/scripts/read_acquire.lua",
				Anchor:  "if redis.call('EXISTS', KEYS[1]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then",
				Replace: "if redis.call('EXISTS', KEYS[3]) == 1 then"}},
			Scenarios: []string{"safe-rw"},
			Note:      "safe-rw's rw-exclusion probe: a reader tries while a writer holds",
		},
		{
			Name:        "writer-ignores-readers",
			Description: "a write lock is granted while readers hold the lock",
			Edits: []Edit{{File: "redlock/scripts/write_acquire.lua",
				Anchor:  "if redis.call('ZCARD', KEYS[2]) > 0 then",
				Replace: "if false then"}},
			Scenarios: []string{"safe-rw"},
			Note:      "safe-rw's rw-exclusion probe: a writer tries while a reader holds",
		},
		{
			Name: "transport-resends-after-reset",
			Description: "the pipelined transport sends a command again on a fresh connection when its " +
				"connection failed with EOF or a reset (the old pool/mux.go), though the master may have run it",
			Edits: []Edit{
				{File: "pool/mux.go",
					Anchor:  "\t\"errors\"\n\t\"runtime\"\n\t\"sync\"\n\t\"sync/atomic\"\n",
					Replace: "\t\"errors\"\n\t\"io\"\n\t\"runtime\"\n\t\"sync\"\n\t\"sync/atomic\"\n\t\"syscall\"\n"},
				{File: "pool/mux.go",
					Anchor: "if tries < maxUnsent && errors.As(err, &notSent) && ctx.Err() == nil {",
					Replace: "if tries < maxUnsent && (errors.As(err, &notSent) || errors.Is(err, io.EOF) ||\n" +
						"\t\t\terrors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)) && ctx.Err() == nil {"},
			},
			Scenarios: []string{"safe-plain", "safe-reentrant"},
			Note:      "safe-plain's drop-private probe (a refused resend leaves the key) and safe-reentrant's drop-inner-unlock probe (a double decrement ends the outer hold)",
		},
		{
			Name: "solo-reply-out-of-order",
			Description: "the pipelined connection's reader reads the reply of a command it took from the pipeline " +
				"before that of an earlier command whose caller gave up reading it itself (pool/solo.go)",
			Edits: []Edit{{File: "pool/mux.go",
				Anchor:  "\t\tselect {\n\t\tcase h := <-mc.handback:\n\t\t\tr, next = h, r\n\t\tdefault:\n\t\t}\n",
				Replace: ""}},
			Scenarios: []string{"safe-plain", "safe-fair"},
			Note:      "the replies-in-step check of safe-plain and safe-fair: ECHO calls beside the lock cycles, read by their callers on idle connections, given up at short timeouts on paused and slow masters",
		},
		{
			Name: "flush-keeps-self",
			Description: "a caller's flush takes a command of a later batch for its own when the request is the same: " +
				"its own, completed and recycled meanwhile for another caller (pool/mux.go)",
			Edits: []Edit{{File: "pool/mux.go",
				Anchor:  "\t\t\tinterleave.AfterOwnWrite()\n\t\t}\n\t\tself = nil\n",
				Replace: "\t\t\tinterleave.AfterOwnWrite()\n\t\t}\n"}},
			Scenarios: []string{"safe-plain", "safe-fair"},
			Runs:      4, // each pair of runs meets the interleaving about 3 times in 4
			Note: "the workload stretches the point after a caller's own write (interleave), so that its lock call's reply comes back and " +
				"its request goes to an ECHO Do queued behind it; the connection then stops answering, which the replies-in-step check finds " +
				"when every link must answer at the end",
		},
		{
			Name:        "failed-extend-keeps-until",
			Description: "a failed, late or in-flight Extend leaves Until as it was, though its shorter TTL may have landed",
			Edits: []Edit{
				{File: "redlock/extend.go",
					Anchor:  "\t\tlk.lowerUntilLocked(start.Add(ttl - clock.Drift(ttl, l.driftFactor)))\n",
					Replace: ""},
				{File: "redlock/extend.go",
					Anchor:  "\tif !succeeded {\n\t\tlk.lowerUntilLocked(until)\n\t\treturn\n\t}",
					Replace: "\tif !succeeded {\n\t\treturn\n\t}"},
			},
			Scenarios: []string{"safe-extend"},
			Note:      "safe-extend's short-extend probe: a shorter Extend fails on slow links, lands late, and the masters are sampled once a quorum enforce it",
		},
		{
			Name:        "extends-not-serialised",
			Description: "Extends of one Lock run at once: a longer Extend's late result raises Until past a shorter one the masters applied after it",
			Edits: []Edit{{File: "redlock/extend.go",
				Anchor:  "\tcase extending <- struct{}{}:\n\t\tdefer func() { <-extending }()\n",
				Replace: "\tdefault:\n\t\t_ = extending\n"}},
			Scenarios: []string{"safe-extend"},
			Note:      "safe-extend's generative workload runs two Extends with different TTLs at a time: a longer one decided last leaves Until past the masters' expiry (until-within-expiry)",
		},
		{
			Name:        "reentrant-extend-shortens",
			Description: "the reentrant extend sets the hash's TTL unconditionally: an inner hold shortens the outer one",
			Edits: []Edit{{File: "redlock/scripts/reentrant_extend.lua",
				Anchor:  "  if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then\n    redis.call('PEXPIRE', KEYS[1], ARGV[2])\n  end\n  return 1",
				Replace: "  redis.call('PEXPIRE', KEYS[1], ARGV[2])\n  return 1"}},
			Scenarios: []string{"safe-reentrant"},
			Note:      "safe-reentrant's drop-inner-unlock probe: an inner hold extended by a short TTL, then the outer hold sampled",
		},
		{
			Name:        "unlock-ended-ctx-sends-nothing",
			Description: "Unlock with a context that has already ended sends no release and marks the lock released",
			Edits: []Edit{{File: "redlock/lock.go",
				Anchor: "\ttype outcome struct {\n\t\tres *quorum.Result",
				Replace: "\tif ctx.Err() != nil {\n\t\treturn lk.l.quorumError(opUnlock, lk.key, nil, ctx.Err())\n\t}\n" +
					"\ttype outcome struct {\n\t\tres *quorum.Result"}},
			Scenarios: []string{"safe-plain"},
			Note:      "safe-plain's ended-unlock probe: Unlock(ended ctx) of a 5s lock, then no quorum may hold it",
		},
		{
			Name: "shared-multi-counts-as-grant",
			Description: "MULTI is let through on the shared pipelined connection and any non-nil SET reply " +
				"(QUEUED) counts as a grant",
			Edits: []Edit{
				{File: "pool/connstate.go",
					Anchor:  "\tname := strings.ToUpper(cmd)\n\tswitch {",
					Replace: "\tname := strings.ToUpper(cmd)\n\tif name == \"MULTI\" {\n\t\treturn nil\n\t}\n\tswitch {"},
				{File: "redlock/variant.go",
					Anchor:  "return quorum.Vote{Err: fmt.Errorf(\"redlock: unexpected SET reply %v\", reply)}",
					Replace: "return quorum.Vote{Yes: true, Value: fmt.Sprint(reply)}"},
			},
			Scenarios: []string{"safe-plain"},
			Note:      "safe-plain's shared-multi probe: MULTI on every shared connection of one client, which then tries a held key",
		},
		{
			Name: "semaphore-permit-no-wrap",
			Description: "a semaphore's pass over its permits runs on from its random start without wrapping " +
				"around: permits K and above exist, and more than K holders fit",
			Edits: []Edit{{File: "redlock/semaphore.go",
				Anchor:  "v, keys := s.permit((off + j) % s.k)",
				Replace: "v, keys := s.permit(off + j)"}},
			Scenarios: []string{"safe-semaphore"},
			Note:      "safe-semaphore's semaphore-full probe: a full semaphore of 2 permits tried 8 times from random permits; at most K holders at once",
		},
		{
			Name:        "multi-acquire-partial",
			Description: "the multi-key acquire sets whichever of its keys are free (SET NX each) and grants when it set any, instead of all or none",
			Edits: []Edit{{File: "redlock/scripts/multi_acquire.lua",
				Anchor: "for i = 1, #KEYS do\n  if redis.call('EXISTS', KEYS[i]) == 1 then\n    return 0\n  end\nend\n" +
					"for i = 1, #KEYS do\n  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])\nend\nreturn 1",
				Replace: "local n = 0\nfor i = 1, #KEYS do\n  if redis.call('SET', KEYS[i], ARGV[1], 'NX', 'PX', ARGV[2]) then\n    n = n + 1\n  end\nend\nreturn n"}},
			Scenarios: []string{"safe-multi"},
			Note:      "safe-multi's multi workload: overlapping sets of 1-3 of 4 keys, and plain locks of single keys, among 4 clients",
		},
		{
			Name:        "resume-creates",
			Description: "Resume sets the lock key where it is missing (SET PX) instead of only extending it where it holds the token",
			Edits: []Edit{{File: "redlock/resume.go",
				Anchor: "c := resume.with(keys, token, ms)",
				Replace: "_ = resume; c := script{hash: \"31eeee3b6f8cb3a735c8295d182d9bfcdfa0305d\", hashArg: \"31eeee3b6f8cb3a735c8295d182d9bfcdfa0305d\", src: \"if redis.call('GET', KEYS[1]) == ARGV[1] or " +
					"redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0\"}.with(keys, token, ms)"}},
			Scenarios: []string{"safe-multi"},
			Note:      "safe-multi's resume workload: a stale token handed over after Unlock must not be resumed",
		},
		{
			Name:        "fair-grant-ignores-lock",
			Description: "the fair acquire grants the first waiter in line even while the lock key is held (SET PX without NX): the queue alone decides",
			Edits: []Edit{{File: "redlock/scripts/fair_acquire.lua",
				Anchor:  "if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then",
				Replace: "if not redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) then"}},
			Scenarios: []string{"safe-fair"},
			Note:      "safe-fair's fair-held probe and long holds: a hold that outlives every registration, then another client tries",
		},
		{
			Name: "noscript-fallback-after-giving-up",
			Description: "the pipelined transport sends an EVALSHA answered NOSCRIPT again as EVAL also when its caller " +
				"gave up (pool/mux.go): the late acquire runs behind the release written after it, and holds the key until its TTL",
			Edits: []Edit{{File: "pool/mux.go",
				Anchor:  "if r.src != \"\" && isNoScript(err) && r.ctx.Err() == nil {",
				Replace: "if r.src != \"\" && isNoScript(err) {"}},
			Scenarios: []string{"safe-plain"},
			Note:      "safe-plain's late-noscript probe: after SCRIPT FLUSH, a fenced acquire over a link slower than the node timeout, unlocked at once",
		},
	}
}
