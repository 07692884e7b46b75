package scenario

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// No silent absence. A protection that cannot apply through some client
// must say so: issue 29 found the restart guard silently off through the
// rueidis and valkey-go adapters and for an ACL user without INFO, while
// locks were granted. identity-refused locks through every Node type as
// such a user; third-party-node through a Node that offers none of
// redlock.Abilities. Both must be refused loudly (an error that matches
// ErrInvalid, never ErrUnavailable: code that runs anyway when Redis is
// down must not run unlocked for a misconfiguration), and work once the
// guard is turned off on purpose.

// noInfoUser is the ACL user of identity-refused: every command but INFO.
const noInfoUser, noInfoPassword = "noinfo", "noinfo-pw"

func absenceScenarios() []Scenario {
	return []Scenario{
		{
			Name:      "identity-refused",
			Invariant: "through every Node type, a client logged in as an ACL user that may not run INFO cannot have its masters' restarts guarded: with the default Config no lock is granted, and every refusal says why (ErrInvalid, naming INFO), never ErrUnavailable; with the guard off (RestartGuard -1) it locks",
			Expect:    "0 grants with the guard on, each failure an ErrInvalid naming INFO; a lock per Node type with the guard off; no key left",
			run:       identityRefused,
		},
		{
			Name:      "third-party-node",
			Invariant: "a Node that implements only redlock.Node's three methods (a third party's, a wrapper that forwards no ability) cannot give the restart guard its master's identity: New refuses it, naming the ability; with the guard off it locks",
			Expect:    "New refuses with ErrInvalid naming Abilities.Identity; with RestartGuard -1 a lock is granted and released",
			run:       thirdPartyNode,
		},
	}
}

// identityRefused is the body of identity-refused.
func identityRefused(ctx context.Context, r *Run) error {
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
	if err != nil {
		return err
	}
	for _, n := range e.Cluster.Nodes() {
		if err := cluster.Do(ctx, n.Addr(), "ACL", "SETUSER", noInfoUser, "on", ">"+noInfoPassword, "~*", "&*", "+@all", "-info"); err != nil {
			return err
		}
	}
	for _, t := range workload.Transports {
		for _, guardOff := range []bool{false, true} {
			if err := identityRefusedOver(ctx, r, e, t, guardOff); err != nil {
				return err
			}
		}
	}
	left, err := e.AwaitNoKeys(ctx, 2*time.Second)
	if err != nil {
		return err
	}
	r.Check("no key left", left == 0, "%d keys of the run left", left)
	return nil
}

// identityRefusedOver locks through transport t as the user without INFO,
// with the default Config or, with guardOff, RestartGuard -1.
func identityRefusedOver(ctx context.Context, r *Run, e *workload.Env, t workload.Transport, guardOff bool) error {
	var nodes []redlock.Node
	for _, addr := range e.Net.Addrs(0) {
		n, closeNode, err := workload.DialAs(t, addr, noInfoUser, noInfoPassword)
		if err != nil {
			return err
		}
		defer closeNode()
		nodes = append(nodes, n)
	}
	cfg := workload.LockerConfig(workload.NodeTimeout)
	if guardOff {
		cfg.RestartGuard = -1
	}
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		return fmt.Errorf("scenario: a Locker over %s: %w", t, err)
	}
	defer l.Close(context.WithoutCancel(ctx))
	key := e.Key("refused-" + string(t))
	if guardOff {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		lk, err := l.Lock(lctx, key, time.Second)
		cancel()
		r.Check(fmt.Sprintf("%s, guard off: locks", t), err == nil, "%s", errText(err))
		if lk != nil {
			lk.Unlock(ctx)
		}
		return nil
	}
	granted, wrong := 0, ""
	for range 3 {
		lk, err := l.TryLock(ctx, key, time.Second)
		switch {
		case err == nil:
			granted++
			lk.Unlock(ctx)
		case !errors.Is(err, redlock.ErrInvalid) || errors.Is(err, redlock.ErrUnavailable) || !strings.Contains(err.Error(), "INFO"):
			wrong = err.Error()
		}
	}
	r.Check(fmt.Sprintf("%s, guard on: no grant", t), granted == 0, "%d of 3 tries granted", granted)
	r.Check(fmt.Sprintf("%s, guard on: refusals say why (ErrInvalid, INFO; not ErrUnavailable)", t), wrong == "", "%s", wrong)
	return nil
}

// threeMethods is a Node of a third party: redlock.Node's three methods,
// no Abilities.
type threeMethods struct{ n redlock.Node }

func (m threeMethods) Addr() string { return m.n.Addr() }
func (m threeMethods) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return m.n.Do(ctx, cmd, args...)
}
func (m threeMethods) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return m.n.Eval(ctx, hash, src, keys, args...)
}

// thirdPartyNode is the body of third-party-node.
func thirdPartyNode(ctx context.Context, r *Run) error {
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
	if err != nil {
		return err
	}
	var nodes []redlock.Node
	for _, addr := range e.Net.Addrs(0) {
		n, closeNode, err := workload.DialAs(workload.Pipelined, addr, "", e.Cluster.Password())
		if err != nil {
			return err
		}
		defer closeNode()
		nodes = append(nodes, threeMethods{n})
	}
	_, err = redlock.New(nodes, workload.LockerConfig(workload.NodeTimeout))
	r.Check("New refuses it with the guard on, naming the ability", errors.Is(err, redlock.ErrInvalid) && strings.Contains(errText(err), "Abilities.Identity"), "New: %s", errText(err))
	cfg := workload.LockerConfig(workload.NodeTimeout)
	cfg.RestartGuard = -1
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		return fmt.Errorf("scenario: a Locker over three-method Nodes, guard off: %w", err)
	}
	defer l.Close(context.WithoutCancel(ctx))
	lk, err := l.TryLock(ctx, e.Key("k"), time.Second)
	r.Check("with the guard off it locks", err == nil, "%s", errText(err))
	if lk != nil {
		lk.Unlock(ctx)
	}
	return nil
}
