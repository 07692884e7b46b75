package floor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/sim/master"
)

type node struct {
	mu   sync.Mutex
	m    *master.Master
	name string
}

func (n *node) Addr() string                                                 { return n.name }
func (n *node) Do(ctx context.Context, cmd string, args ...any) (any, error) { return nil, nil }
func (n *node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	r := n.m.Eval(time.Now(), src, keys, nodeutil.AppendArgs(nil, args), nil)
	if e, ok := r.(master.Error); ok {
		return nil, e
	}
	return r, nil
}
func (n *node) Abilities() redlock.Abilities {
	return redlock.Abilities{EvalAsync: func(ctx context.Context, src string, cmdArgs []any, done redlock.Completion) {
		_, keys, args, _ := nodeutil.SplitPrepared(cmdArgs)
		n.mu.Lock()
		r := n.m.Eval(time.Now(), src, keys, args, nil)
		n.mu.Unlock()
		if e, ok := r.(master.Error); ok {
			done.Complete(nil, e)
			return
		}
		if s, ok := r.(master.Status); ok {
			r = string(s)
		}
		done.Complete(r, nil)
	}}
}

func BenchmarkLockUnlock(b *testing.B) {
	for _, withLua := range []bool{true} {
		var nodes []redlock.Node
		for i := range 3 {
			now := time.Now()
			nodes = append(nodes, &node{name: fmt.Sprint("m", i), m: master.New("m", now, master.Persistence{}, master.NewClock(now, 0, 1), -1)})
		}
		l, err := redlock.New(nodes, redlock.Config{RestartGuard: -1})
		if err != nil {
			b.Fatal(err)
		}
		_ = withLua
		ctx := context.Background()
		for b.Loop() {
			lk, err := l.Lock(ctx, "k", time.Second)
			if err != nil {
				b.Fatal(err)
			}
			lk.Unlock(ctx)
		}
	}
}
