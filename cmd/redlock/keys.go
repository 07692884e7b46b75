package main

import (
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// lockKeys names the Redis keys that the lock kinds of package redlock keep
// for the lock named key (package layout is their one home), on the masters
// (with --prefix in front of key): a plain, fenced, fair, multi-key or
// reentrant lock is the key itself; a read-write lock adds "{key}:w",
// "{key}:r" and "{key}:wq"; a fair lock's queue "{key}:fair:*"; a
// semaphore's permits "{key}:permit:<i>"; the fencing counter is
// "{key}:fence"; the holder record of a lock taken WithMetadata (redlock
// run's, an election's, a reentrant owner's, a writer's) "{key}:holder",
// and a permit's "{key}:permit:<i>:holder".
type lockKeys struct {
	key    string // as the user named it
	prefix string // --prefix
	name   string // its name on the masters: the prefix and key
	// derivable: the derived keys share the key's hash slot (see
	// layout.Derivable). When not, the library refuses the key (its
	// tombstones could not share its slot), and redlock looks at the key
	// itself only.
	derivable                               bool
	writer, readers, waiting, fence, holder string
	fair                                    layout.Fair
}

func keysOf(prefix, key string) lockKeys {
	name := prefix + key
	rw := layout.RWKeys(name)
	return lockKeys{key: key, prefix: prefix, name: name, derivable: layout.Derivable(name),
		writer: rw.Writer, readers: rw.Readers, waiting: rw.Waiting,
		fence: layout.Fence(name), holder: layout.Holder(name), fair: layout.FairKeys(name)}
}

// The roles of a lock's keys, as shape.lua names them: what each holds.
const (
	roleKey     = "key"     // the lock key: a token, or a reentrant hash
	roleWriter  = "writer"  // a read-write lock's writer token
	roleReaders = "readers" // its readers by expiry
	roleWaiting = "waiting" // its waiting writer's id
	roleQueue   = "queue"   // a fair lock's waiters by ticket
	roleExpiry  = "expiry"  // its waiters by expiry
	roleTicket  = "ticket"  // its ticket counter
	roleFence   = "fence"   // the fencing counter
	roleHolder  = "holder"  // a holder record (redlock.WithMetadata)
	rolePermit  = "permit"  // a semaphore permit's token
	// rolePermitHolder is a permit's holder record, after its permit.
	rolePermitHolder = "permit-holder"
)

// roleKeys are keys and their roles, in the order a script gets them.
type roleKeys struct {
	names, roles []string
}

func (r *roleKeys) add(name, role string) {
	r.names = append(r.names, name)
	r.roles = append(r.roles, role)
}

// args returns the roles as script arguments.
func (r roleKeys) args() []any {
	a := make([]any, len(r.roles))
	for i, role := range r.roles {
		a[i] = role
	}
	return a
}

// The keys that inspect reads, unlock --force deletes and unlock --token
// looks through. --force never deletes the fencing counter (tokens must
// keep growing) nor a fair lock's queue (its registrations expire on their
// own within seconds of a waiter's end, and a live waiter keeps its place).
const (
	forInspect = iota
	forForce
	forToken
)

// selectFor returns k's keys for use (forInspect, forForce or forToken), with
// the semaphore permits given.
func (k lockKeys) selectFor(use int, permits []int) roleKeys {
	var r roleKeys
	r.add(k.name, roleKey)
	if !k.derivable {
		return r
	}
	r.add(k.writer, roleWriter)
	r.add(k.readers, roleReaders)
	if use != forToken {
		r.add(k.waiting, roleWaiting)
	}
	if use == forInspect {
		r.add(k.fair.Queue, roleQueue)
		r.add(k.fair.Expiry, roleExpiry)
		r.add(k.fair.Ticket, roleTicket)
		r.add(k.fence, roleFence)
	}
	r.add(k.holder, roleHolder)
	for _, i := range permits {
		p := layout.Permit(k.name, i)
		r.add(p, rolePermit)
		r.add(layout.Holder(p), rolePermitHolder)
	}
	return r
}

// permitPattern is the SCAN MATCH pattern of k's permits.
func (k lockKeys) permitPattern() string {
	return globEscape(layout.SlotPrefix(k.name)+layout.PermitInfix) + "*"
}

// permitIndex reads the permit number of a key that permitPattern matched;
// ok is false for a name that no permit has.
func (k lockKeys) permitIndex(name string) (int, bool) {
	digits, ok := strings.CutPrefix(name, layout.SlotPrefix(k.name)+layout.PermitInfix)
	if !ok || strings.Trim(digits, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n < redlock.MaxPermits
}

// globEscape escapes the characters special to Redis's glob patterns.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// channel is the release channel of k, on which the library's waiters
// listen (with the prefix, as the library names it).
func (k lockKeys) channel() string { return layout.ReleaseChannel(k.name) }
