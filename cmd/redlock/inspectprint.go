package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// printInspect prints one KEY's report: each master's state, then what the
// masters agree on.
func printInspect(e env, rep inspectReport) {
	w := e.stdout
	for _, s := range rep.Masters {
		if s.Error != "" {
			fmt.Fprintf(w, "%s: ERROR: %s\n", s.Addr, s.Error)
			continue
		}
		fmt.Fprintf(w, "%s:\n", s.Addr)
		printMaster(e, s)
	}
	printSummary(e, rep)
}

// printMaster prints what one master keeps.
func printMaster(e env, s keyState) {
	w := e.stdout
	empty := true
	line := func(format string, args ...any) {
		fmt.Fprintf(w, "  "+format+"\n", args...)
		empty = false
	}
	for _, n := range s.NotLock {
		line("%s is not a lock: %s", n.Key, n.Reason)
	}
	if s.Lock != nil {
		line("lock: token %s, ttl %s", s.Lock.Token, ttlString(s.Lock.TTLMs))
	}
	if s.Reentrant != nil {
		for _, o := range slices.Sorted(maps.Keys(s.Reentrant.Owners)) {
			line("reentrant: owner %s, %d hold(s), ttl %s", o, s.Reentrant.Owners[o], ttlString(s.Reentrant.TTLMs))
		}
	}
	if s.Writer != nil {
		line("writer: token %s, ttl %s", s.Writer.Token, ttlString(s.Writer.TTLMs))
	}
	for _, r := range s.Readers {
		line("reader: token %s, ttl %s", r.Token, ttlString(r.TTLMs))
	}
	if s.WaitingWriter != nil {
		line("waiting writer: id %s, ttl %s", s.WaitingWriter.Token, ttlString(s.WaitingWriter.TTLMs))
	}
	for _, p := range s.Permits {
		line("permit %d: token %s, ttl %s", p.Permit, p.Token, ttlString(p.TTLMs))
	}
	for i, q := range s.FairQueue {
		line("fair waiter %d: id %s, ticket %d, registration expires in %s", i+1, q.ID, q.Ticket, ttlString(q.TTLMs))
	}
	if empty {
		line("not held")
	}
	if s.PermitsNotScanned != "" {
		line("%s", s.PermitsNotScanned)
	}
	if r := s.Holder; r != nil && !r.Matches {
		line("holder record of token %s: stale (not the lock's token), ignored", r.Token)
	}
	for _, r := range s.StalePermitRecords {
		line("a permit's holder record of token %s: stale (not the permit's token), ignored", r.Token)
	}
	if s.Fence != nil {
		line("fencing counter: %d", *s.Fence)
	}
	if s.GuardError != "" {
		line("restart guard's record: ERROR: %s", s.GuardError)
	} else {
		line("restart guard's record: %s", describeGuard(s.Guard, s.RunID))
	}
}

// printSummary prints what a quorum agrees on.
func printSummary(e env, rep inspectReport) {
	w := e.stdout
	n := len(rep.Masters)
	notLock := map[string][]string{} // key -> reasons, one per master
	for _, s := range rep.Masters {
		for _, nl := range s.NotLock {
			notLock[nl.Key] = append(notLock[nl.Key], nl.Reason)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(notLock)) {
		fmt.Fprintf(w, "%s is not a lock on %d of %d masters: %s. No holder is counted there; redlock unlock leaves it alone\n",
			k, len(notLock[k]), n, strings.Join(slices.Compact(slices.Sorted(slices.Values(notLock[k]))), "; "))
	}
	if len(rep.Holders) == 0 {
		fmt.Fprintf(w, "%s is not held on any master\n", rep.Key)
	}
	permits := 0
	for _, h := range rep.Holders {
		agree := "no quorum"
		if h.Quorum {
			agree = "quorum"
		}
		kind := h.Kind
		if h.Permit != nil {
			kind = fmt.Sprintf("permit %d", *h.Permit)
			if h.Quorum {
				permits++
			}
		}
		fmt.Fprintf(w, "%s %s on %d of %d masters (%s)\n", kind, h.Token, len(h.Masters), n, agree)
		if r := h.Record; r != nil {
			printRecord(e, r)
		}
	}
	if permits > 0 {
		fmt.Fprintf(w, "semaphore %s: %d permit(s) held on a quorum\n", rep.Key, permits)
	}
	for i, v := range rep.Waiters {
		fmt.Fprintf(w, "fair waiter %d: %s, ticket %d, on %d of %d masters, registration expires in %s\n",
			i+1, v.ID, v.Ticket, len(v.Masters), n, ttlString(v.TTLMs))
	}
}

// printRecord prints a holder record under its holder: who run's record
// names, in words, and every other field a library user attached, as
// field=value.
func printRecord(e env, r *holderRecord) {
	if r.isRun() {
		fmt.Fprintf(e.stdout, "  held by %s\n", describeRecord(r))
	}
	switch others := r.others(); {
	case len(others) > 0:
		fmt.Fprintf(e.stdout, "  metadata: %s\n", describeFields(others))
	case !r.isRun():
		fmt.Fprintf(e.stdout, "  metadata: none (a holder record with the token only)\n")
	}
}

// describeFields lists fields as field=value, by name; a value (or name)
// that is empty or holds spaces, quotes or control characters is quoted.
func describeFields(fields map[string]string) string {
	parts := make([]string, 0, len(fields))
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, quoteField(f)+"="+quoteField(fields[f]))
	}
	return strings.Join(parts, ", ")
}

// quoteField is s as it is, or quoted (strconv.Quote) when it is empty or
// could not be read back from a line of field=value pairs.
func quoteField(s string) string {
	if s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == '"' || r == '=' || r == ',' || r == '\\' || unicode.IsSpace(r) || !unicode.IsPrint(r)
	}) {
		return strconv.Quote(s)
	}
	return s
}

// describeRecord says who a holder record of redlock run names.
func describeRecord(r *holderRecord) string {
	s := fmt.Sprintf("pid %d on host %s", r.PID, r.Host)
	if r.CommandPID > 0 {
		s += fmt.Sprintf(", command %s (pid %d)", r.Command, r.CommandPID)
	} else if r.Command != "" {
		s += ", command " + r.Command
	}
	if t, err := time.Parse(time.RFC3339, r.Started); err == nil {
		s += fmt.Sprintf(", since %s (%s ago)", r.Started, time.Since(t).Round(time.Second))
	}
	if r.Note != "" {
		s += fmt.Sprintf(", note %q", r.Note)
	}
	return s
}

// printMulti says which tokens hold several of the KEYs inspected together.
func printMulti(e env, reps []inspectReport) {
	said := map[string]bool{}
	for _, rep := range reps {
		for _, h := range rep.Holders {
			if len(h.Keys) > 1 && !said[h.Token] {
				said[h.Token] = true
				fmt.Fprintf(e.stdout, "token %s holds %s on a quorum: one multi-key lock\n", h.Token, strings.Join(h.Keys, ", "))
			}
		}
	}
}

func ttlString(ms int64) string {
	if ms < 0 {
		return "none"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
