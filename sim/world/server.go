package world

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/sim/master"
)

// What a master gives beyond running commands: its identity on a new
// connection, release announcements to subscribers, and durable
// confirmations (WAITAOF / WAIT) against its simulated disk and replica.

// identity is what a new connection reads (nodeutil.IdentityCommands).
type identity struct {
	run, server, persistence, appendfsync string
	refused                               error // INFO refused (an ACL)
}

func (s *server) identityLocked(now time.Time) *identity {
	if s.noInfo {
		return &identity{run: s.m.RunID(), refused: master.Error("NOPERM this user has no permissions to run the 'info' command")}
	}
	sv, p, f := s.m.Info(now)
	return &identity{run: s.m.RunID(), server: sv, persistence: p, appendfsync: f}
}

// sub is one subscription of a Node to a channel.
type sub struct {
	l  *link
	ch chan<- struct{}
}

// publishLocked announces a release on channel from s at now: each
// subscriber gets a non-blocking send when the message reaches it.
func (w *World) publishLocked(s *server, channel string, now time.Time) int64 {
	subs := s.subs[channel]
	for _, sb := range subs {
		l := sb.l
		if lost, _ := l.dropLocked(w, now, toClient); lost {
			continue
		}
		at := l.arrivalLocked(w, now, toClient)
		if until, drop := l.cutLocked(at, toClient); !until.IsZero() {
			if drop {
				continue
			}
			at = until.Add(w.cfg.Delay.draw(w.rng))
		}
		ch := sb.ch
		w.atLocked(at, func() {
			select {
			case ch <- struct{}{}:
			default:
			}
		})
	}
	return int64(len(subs))
}

// subscribe registers ch for channel on the master of l; it returns when
// the master acknowledged it (a round trip), or with ctx's error when it
// cannot reach the master.
func (w *World) subscribe(ctx context.Context, l *link, channel string, ch chan<- struct{}) (func(), error) {
	w.mu.Lock()
	now := time.Now()
	s := w.masters[l.master]
	cut1, _ := l.cutLocked(now, toMaster)
	cut2, _ := l.cutLocked(now, toClient)
	if w.clients[l.client].crashed || w.stopped || !s.m.Up() || !cut1.IsZero() || !cut2.IsZero() || s.frozenUntil.After(now) {
		w.mu.Unlock()
		<-ctx.Done()
		return nil, fmt.Errorf("sim: subscribe to %s: %w", s.m.Name, ctx.Err())
	}
	sb := &sub{l: l, ch: ch}
	s.subs[channel] = append(s.subs[channel], sb)
	rtt := l.delayLocked(w, now, toMaster) + l.delayLocked(w, now, toClient)
	w.mu.Unlock()
	unsubscribe := func() {
		w.mu.Lock()
		s.subs[channel] = slices.DeleteFunc(s.subs[channel], func(x *sub) bool { return x == sb })
		if len(s.subs[channel]) == 0 {
			delete(s.subs, channel)
		}
		w.mu.Unlock()
	}
	t := time.NewTimer(rtt)
	defer t.Stop()
	select {
	case <-t.C:
		return unsubscribe, nil
	case <-ctx.Done():
		unsubscribe()
		return nil, ctx.Err()
	}
}

// confirm is a durable confirmation asked of a master.
type confirm struct {
	probe           string
	local           bool
	replicas        int
	want            string        // the run id the Node knew when asked ("": unknown)
	wait            time.Duration // WAITAOF's timeout
	done            func(local, replicas int, err error)
	probeAt         time.Time
	run             string
	localAt, replAt time.Time // when each is acknowledged (zero: never)
}

// Complete implements Completion for a confirmation's call.
func (cf *confirm) Complete(reply any, err error) {
	if err != nil {
		cf.done(0, 0, err)
		return
	}
	r := reply.([2]int)
	cf.done(r[0], r[1], nil)
}

// confirmArrivedLocked runs a confirmation's probe write on s and
// schedules WAITAOF's answer.
func (w *World) confirmArrivedLocked(c *call, s *server, now time.Time) {
	cf := c.confirm
	if cf.want != "" && cf.want != s.m.RunID() {
		w.replyLocked(c, now, nil, fmt.Errorf("%w (asked of run id %s, confirmed by %s)", nodeutil.ErrMasterChanged, cf.want, s.m.RunID()), nil)
		return
	}
	if cf.local && !s.m.Persist.AppendOnly {
		w.replyLocked(c, now, nil, master.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."), nil)
		return
	}
	s.m.Do(now, []string{"SET", cf.probe, "1"}, nil)
	cf.probeAt, cf.run = now, s.m.RunID()
	p := s.m.Persist
	switch {
	case !p.AppendOnly || p.Fsync == "no":
	case p.Fsync == "always":
		cf.localAt = now
	default:
		cf.localAt = w.nextFsync(s, now).Add(time.Nanosecond)
	}
	if lag := s.m.Lag(); lag >= 0 {
		cf.replAt = now.Add(lag)
	}
	ready := now
	if cf.local {
		ready = laterOrNever(ready, cf.localAt)
	}
	if cf.replicas > 0 {
		ready = laterOrNever(ready, cf.replAt)
	}
	deadline := now.Add(cf.wait)
	if ready.IsZero() || ready.After(deadline) {
		ready = deadline
	}
	w.stepLocked(c, ready, func() { w.confirmAnswer(c, s) })
}

// laterOrNever is the later of a and b, zero (never) when b is zero.
func laterOrNever(a, b time.Time) time.Time {
	if b.IsZero() {
		return time.Time{}
	}
	if b.After(a) {
		return b
	}
	return a
}

// nextFsync is the first fsync of an everysec master after now.
func (w *World) nextFsync(s *server, now time.Time) time.Time {
	first := w.start.Add(s.fsyncPhase)
	if now.Before(first) {
		return first
	}
	k := now.Sub(first)/time.Second + 1
	return first.Add(k * time.Second)
}

// confirmAnswer is WAITAOF's (or WAIT's) answer, when what it waited for
// came or its timeout passed.
func (w *World) confirmAnswer(c *call, s *server) {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := time.Now()
	cf := c.confirm
	if !s.m.Up() || s.m.RunID() != cf.run {
		w.replyLocked(c, now, nil, ErrReset, nil)
		return
	}
	var local, repl int
	if !cf.localAt.IsZero() && !cf.localAt.After(now) {
		local = 1
	}
	if lag := s.m.Lag(); lag >= 0 && !cf.probeAt.Add(lag).After(now) {
		repl = 1
	}
	w.replyLocked(c, now, [2]int{local, repl}, nil, nil)
}
