package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/pool"
)

// keeper writes run's holder record (holder.go) on every master, and after
// each renewal counts the masters that hold the lock: when fewer than all
// do, the lock rests on a bare quorum or close to it (one or two more
// failed masters lose it), and run warns on stderr, once per change, and
// says when every master holds it again.
//
// The library's renewal cannot tell that count: it returns as soon as a
// quorum extended the lock, so its count of yes votes is the quorum, always.
// The record's script (holder.lua) runs on every master and waits for each
// (a master that does not answer within the timeout counts as not holding):
// one round trip per master per renewal, every third of the TTL.
type keeper struct {
	e       env
	ms      masters
	quorum  int
	timeout time.Duration
	k       lockKeys
	token   string
	fields  []any // the record's fields but the token and COMMAND's pid

	mu      sync.Mutex
	pid     int  // COMMAND's process id, once started
	renewal bool // a renewal since the last write

	kick   chan struct{}
	ctx    context.Context // ends with stop
	cancel context.CancelFunc
	done   chan struct{}
	reach  int // how many masters held the lock at the last count
}

// startKeeper writes the record of the lock k held with token, and keeps
// it until stop; fields are its field, value pairs but the token's.
func startKeeper(e env, ms masters, quorum int, timeout time.Duration, k lockKeys, token string, fields []any) *keeper {
	kp := &keeper{e: e, ms: ms, quorum: quorum, timeout: timeout, k: k, token: token, fields: fields,
		kick: make(chan struct{}, 1), done: make(chan struct{}), reach: len(ms)}
	kp.ctx, kp.cancel = context.WithCancel(context.Background())
	go kp.loop()
	kp.poke()
	return kp
}

// renewed tells the keeper that a renewal of the lock succeeded.
func (kp *keeper) renewed() {
	kp.mu.Lock()
	kp.renewal = true
	kp.mu.Unlock()
	kp.poke()
}

// started tells the keeper COMMAND's process id.
func (kp *keeper) started(pid int) {
	kp.mu.Lock()
	kp.pid = pid
	kp.mu.Unlock()
	kp.poke()
}

func (kp *keeper) poke() {
	notify(kp.kick) // or a write is due already
}

// stop ends the keeper, and its write in progress (if any): a record that
// it still writes is written only where the lock is still held, and the
// release deletes it with the lock. Call it before the release.
func (kp *keeper) stop() {
	kp.cancel()
	<-kp.done
}

func (kp *keeper) loop() {
	defer close(kp.done)
	for {
		select {
		case <-kp.ctx.Done():
			return
		case <-kp.kick:
		}
		kp.mu.Lock()
		renewal, pid := kp.renewal, kp.pid
		kp.renewal = false
		kp.mu.Unlock()
		held, missing := kp.write(pid)
		if renewal && kp.ctx.Err() == nil {
			kp.report(held, missing)
		}
	}
}

// write writes the record on every master and returns how many hold the
// lock, and why each other one does not.
func (kp *keeper) write(pid int) (held int, missing []string) {
	keys := []string{kp.k.name}
	if kp.k.derivable {
		keys = append(keys, kp.k.holder)
	}
	args := append([]any{kp.token}, kp.fields...)
	if pid > 0 {
		args = append(args, fieldCommandPID, strconv.Itoa(pid))
	}
	why := make([]string, len(kp.ms))
	kp.ms.each(kp.ctx, kp.timeout, func(ctx context.Context, i int, n *pool.Node) {
		reply, err := eval(ctx, n, holderSrc, keys, args...)
		switch {
		case err != nil:
			why[i] = fmt.Sprintf("%s: %v", n.Addr(), err)
		case reply != int64(1):
			why[i] = n.Addr() + ": does not hold the lock"
		}
	})
	for _, w := range why {
		if w == "" {
			held++
		} else {
			missing = append(missing, w)
		}
	}
	return held, missing
}

// report warns when fewer masters than all hold the lock after a renewal,
// once per change of their number, and says when all hold it again.
func (kp *keeper) report(held int, missing []string) {
	n := len(kp.ms)
	switch {
	case held < n && held != kp.reach:
		margin := "one more failed master loses it"
		switch d := held - kp.quorum; {
		case d > 1:
			margin = fmt.Sprintf("%d more may fail", d)
		case d == 1:
			margin = "one more may fail"
		case d < 0:
			margin = "fewer than a quorum: it may be lost"
		}
		kp.e.warnf("warning: the renewal of %q reached only %d of %d masters (quorum %d; %s): %s",
			kp.k.key, held, n, kp.quorum, margin, strings.Join(missing, "; "))
	case held == n && kp.reach < n:
		kp.e.warnf("the renewals of %q reach all %d masters again", kp.k.key, n)
	}
	kp.reach = held
}
