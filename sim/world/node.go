package world

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// Node is one client's redlock.Node for one simulated master: every
// ability a Node can have, each a path through the simulated network. It
// is the only file that knows the Node contract (redlock/node.go): a
// change to the contract costs an edit here.
type Node struct {
	w    *World
	l    *link
	dead *atomic.Bool // set: the process exited, nothing is sent (nil: never)
}

var _ redlock.Capable = (*Node)(nil)

// Node returns client c's Node for master i.
func (w *World) Node(c, i int) *Node { return &Node{w: w, l: w.links[c][i]} }

// ExitingNodes returns Nodes of client c for a process that exits: once
// exit is called they send nothing more (what they sent before still
// arrives).
func (w *World) ExitingNodes(c int) (nodes []redlock.Node, exit func()) {
	dead := new(atomic.Bool)
	for i := range w.masters {
		nodes = append(nodes, &Node{w: w, l: w.links[c][i], dead: dead})
	}
	return nodes, func() { dead.Store(true) }
}

// Nodes returns client c's Nodes, one per master.
func (w *World) Nodes(c int) []redlock.Node {
	out := make([]redlock.Node, len(w.masters))
	for i := range out {
		out[i] = w.Node(c, i)
	}
	return out
}

// Addr names the master.
func (n *Node) Addr() string { return n.w.masters[n.l.master].m.Name }

// Do sends one command and waits for its reply or ctx.
func (n *Node) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	a := append([]string{cmd}, nodeutil.AppendArgs(nil, args)...)
	return n.wait(ctx, func(done Completion) { n.start(ctx, "", nil, a, done) })
}

// Eval runs a script and waits for its reply or ctx.
func (n *Node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	a := nodeutil.AppendArgs(nil, args)
	return n.wait(ctx, func(done Completion) { n.start(ctx, src, keys, a, done) })
}

// Abilities: everything.
func (n *Node) Abilities() redlock.Abilities {
	return redlock.Abilities{
		EvalPrepared: n.evalPrepared,
		EvalAsync:    n.evalAsync,
		Subscribe: func(ctx context.Context, channel string, ch chan<- struct{}) (func(), error) {
			if n.exited() {
				return nil, ErrCrashed
			}
			return n.w.subscribe(ctx, n.l, channel, ch)
		},
		Identity: n.l.ident.Get,
		Confirm:  n.confirm,
	}
}

func (n *Node) evalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	return n.wait(ctx, func(done Completion) { n.evalAsync(ctx, src, cmdArgs, done) })
}

func (n *Node) evalAsync(ctx context.Context, src string, cmdArgs []any, done redlock.Completion) {
	_, keys, args, err := nodeutil.SplitPrepared(cmdArgs)
	if err != nil {
		done.Complete(nil, err)
		return
	}
	n.start(ctx, src, keys, args, done)
}

// start sends a call, unless ctx ended before it could be written.
func (n *Node) start(ctx context.Context, src string, keys, args []string, done Completion) {
	if err := ctx.Err(); err != nil {
		done.Complete(nil, err)
		return
	}
	if n.exited() {
		done.Complete(nil, ErrCrashed)
		return
	}
	n.w.send(&call{w: n.w, l: n.l, src: src, keys: keys, args: args, done: done})
}

func (n *Node) confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	cf := &confirm{probe: probe, local: local, replicas: replicas, want: n.l.ident.RunID(), wait: nodeutil.ConfirmWait(ctx), done: done}
	if err := ctx.Err(); err != nil {
		done(0, 0, err)
		return
	}
	if n.exited() {
		done(0, 0, ErrCrashed)
		return
	}
	n.w.send(&call{w: n.w, l: n.l, args: []string{"WAITAOF"}, done: cf, confirm: cf})
}

// wait starts a call and waits for its outcome or for ctx; the call goes
// on after ctx ends.
func (n *Node) wait(ctx context.Context, start func(done Completion)) (any, error) {
	ch := make(chan outcome, 1)
	start(completionFunc(func(reply any, err error) { ch <- outcome{reply, err} }))
	select {
	case o := <-ch:
		return o.reply, o.err
	case <-ctx.Done():
		return nil, fmt.Errorf("sim: %s: %w", n.Addr(), ctx.Err())
	}
}

// exited reports whether the Node's process exited.
func (n *Node) exited() bool { return n.dead != nil && n.dead.Load() }

type outcome struct {
	reply any
	err   error
}

type completionFunc func(reply any, err error)

func (f completionFunc) Complete(reply any, err error) { f(reply, err) }
