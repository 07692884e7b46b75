package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// keeper looks after run's lock while COMMAND runs. The library keeps the
// holder record (holder.go) with the lock: the acquire writes it, every
// renewal extends it, the release deletes it. The keeper adds COMMAND's
// pid to it once COMMAND started (Lock.SetMetadata), and after each
// renewal counts the masters that hold the lock: when fewer than all do,
// the lock rests on a bare quorum or close to it (one or two more failed
// masters lose it), and run warns on stderr, once per change, and says
// when every master holds it again.
//
// The library's renewal cannot tell that count: it returns as soon as a
// quorum extended the lock, so its count of yes votes is the quorum, always.
// The keeper reads the lock key on every master and waits for each (a
// master that does not answer within the timeout counts as not holding):
// one round trip per master per renewal, every third of the TTL.
type keeper struct {
	e        env
	ms       masters
	quorum   int
	timeout  time.Duration
	k        lockKeys
	lk       *redlock.Lock
	acquired time.Time // when the lock was granted

	mu      sync.Mutex
	pid     int  // COMMAND's process id, once started
	renewal bool // a renewal since the last count

	kick    chan struct{}
	ctx     context.Context // ends with stop
	cancel  context.CancelFunc
	done    chan struct{}
	reach   int // how many masters held the lock at the last count
	written int // the pid in the record
}

// startKeeper looks after lk, whose keys are k, until stop; acquired is
// when lk was granted.
func startKeeper(e env, ms masters, quorum int, timeout time.Duration, k lockKeys, lk *redlock.Lock, acquired time.Time) *keeper {
	kp := &keeper{e: e, ms: ms, quorum: quorum, timeout: timeout, k: k, lk: lk, acquired: acquired,
		kick: make(chan struct{}, 1), done: make(chan struct{}), reach: len(ms)}
	kp.ctx, kp.cancel = context.WithCancel(context.Background())
	go kp.loop()
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
	notify(kp.kick) // or a round is due already
}

// stop ends the keeper, and its round in progress (if any). A record
// that it still replaces is replaced only where the lock is still held,
// and the release deletes it with the lock. Call it before the release.
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
		if pid > 0 && pid != kp.written {
			kp.written = pid
			kp.recordPID(pid)
		}
		if renewal {
			held, missing := kp.count()
			if kp.ctx.Err() == nil {
				kp.report(held, missing)
			}
		}
	}
}

// recordPID adds COMMAND's pid to the holder record, and the time the lock
// was granted (the acquire wrote when run began to wait for it). The
// record is information: when this fails (the lock is being lost, a
// master is slow), the record keeps what the acquire wrote.
func (kp *keeper) recordPID(pid int) {
	md := kp.lk.Metadata()
	md[fieldCommandPID] = strconv.Itoa(pid)
	md[fieldStarted] = kp.acquired.UTC().Format(time.RFC3339)
	ctx, cancel := context.WithTimeout(kp.ctx, kp.timeout)
	defer cancel()
	_ = kp.lk.SetMetadata(ctx, md)
}

// count reads the lock key on every master and returns how many hold the
// lock with its token, and why each other one does not.
func (kp *keeper) count() (held int, missing []string) {
	token := kp.lk.Token()
	why := make([]string, len(kp.ms))
	kp.ms.each(kp.ctx, kp.timeout, func(ctx context.Context, i int, n *pool.Node) {
		reply, err := n.Do(ctx, "GET", kp.k.name)
		switch {
		case err != nil:
			why[i] = fmt.Sprintf("%s: %v", n.Addr(), err)
		case reply == nil || string(asBytes(reply)) != token:
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
