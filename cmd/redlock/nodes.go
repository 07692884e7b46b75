package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// errNoNodes is the error of a command given no masters at all.
var errNoNodes = errors.New("no masters: give --nodes or set REDLOCK_NODES (e.g. redis-a:6379,redis-b:6379,redis-c:6379)")

// nodeList returns the masters named by --nodes or, when it is empty,
// REDLOCK_NODES.
func nodeList(flagValue string, e env) ([]pool.Config, error) {
	spec := flagValue
	if spec == "" {
		spec = e.getenv("REDLOCK_NODES")
	}
	if strings.TrimSpace(spec) == "" {
		return nil, errNoNodes
	}
	var cfgs []pool.Config
	seen := map[string]bool{}
	for item := range strings.SplitSeq(spec, ",") {
		item = strings.TrimSpace(item)
		cfg, err := parseNode(item)
		if err != nil {
			return nil, err
		}
		if seen[cfg.Addr] {
			return nil, fmt.Errorf("master %s is listed twice", cfg.Addr)
		}
		seen[cfg.Addr] = true
		cfgs = append(cfgs, cfg)
	}
	return cfgs, nil
}

// parseNode reads one master: host:port, or redis://[user:password@]host[:port][/db]
// (port 6379 by default), or the same with rediss:// for TLS.
func parseNode(s string) (pool.Config, error) {
	if s == "" {
		return pool.Config{}, errors.New("empty entry in the node list")
	}
	if !strings.Contains(s, "://") {
		addr, err := hostPort(s, "")
		return pool.Config{Addr: addr}, err
	}
	u, err := url.Parse(s)
	if err != nil {
		return pool.Config{}, fmt.Errorf("bad node URL: %v", err)
	}
	var cfg pool.Config
	switch u.Scheme {
	case "redis":
	case "rediss":
		cfg.TLS = &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
	default:
		return cfg, fmt.Errorf("node %q: scheme %q is neither redis nor rediss", redact(u), u.Scheme)
	}
	if cfg.Addr, err = hostPort(u.Host, "6379"); err != nil {
		return cfg, err
	}
	if u.User != nil {
		cfg.Username = u.User.Username()
		var set bool
		if cfg.Password, set = u.User.Password(); !set || cfg.Password == "" {
			return cfg, fmt.Errorf("node %q: a user without a password (write redis://:password@host or redis://user:password@host)", redact(u))
		}
	}
	if db := strings.Trim(u.Path, "/"); db != "" {
		n, err := strconv.Atoi(db)
		if err != nil || n < 0 {
			return cfg, fmt.Errorf("node %q: database %q is not a number", redact(u), db)
		}
		cfg.DB = n
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return cfg, fmt.Errorf("node %q: options (?...) are not supported", redact(u))
	}
	return cfg, nil
}

// hostPort checks host:port (adding defPort when there is no port and
// defPort is set).
func hostPort(s, defPort string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil && defPort != "" && !strings.Contains(strings.TrimPrefix(strings.TrimSuffix(s, "]"), "["), ":") {
		host, port, err = strings.Trim(s, "[]"), defPort, nil
	}
	if err != nil {
		return "", fmt.Errorf("node %q: want host:port", s)
	}
	if host == "" {
		return "", fmt.Errorf("node %q: no host", s)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return "", fmt.Errorf("node %q: bad port %q", s, port)
	}
	return net.JoinHostPort(host, port), nil
}

// redact is u without its password, for messages.
func redact(u *url.URL) string { return u.Redacted() }

// masters are the connected masters of one invocation.
type masters []*pool.Node

// nodes returns ms as redlock.Nodes, for redlock.New.
func (ms masters) nodes() []redlock.Node {
	nodes := make([]redlock.Node, len(ms))
	for i, n := range ms {
		nodes[i] = n
	}
	return nodes
}

// connect makes a pool.Node per config; it does not dial yet.
func connect(cfgs []pool.Config) masters {
	ms := make(masters, len(cfgs))
	for i, cfg := range cfgs {
		ms[i] = pool.New(cfg)
	}
	return ms
}

// Close closes every master's connections.
func (ms masters) Close() {
	for _, n := range ms {
		n.Close()
	}
}

// quorum is the default quorum of len(ms) masters.
func (ms masters) quorum() int { return len(ms)/2 + 1 }

// each calls fn for every master concurrently, each under its own timeout,
// and waits for all.
func (ms masters) each(ctx context.Context, timeout time.Duration, fn func(ctx context.Context, i int, n *pool.Node)) {
	var wg sync.WaitGroup
	for i, n := range ms {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			fn(cctx, i, n)
		})
	}
	wg.Wait()
}

// probe PINGs every master and fails, naming the first failures, when fewer
// than a quorum answer.
func (ms masters) probe(ctx context.Context, timeout time.Duration) error {
	errs := make([]error, len(ms))
	ms.each(ctx, timeout, func(ctx context.Context, i int, n *pool.Node) {
		_, errs[i] = n.Do(ctx, "PING")
	})
	var failed []string
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", ms[i].Addr(), err))
		}
	}
	if len(ms)-len(failed) < ms.quorum() {
		return fmt.Errorf("only %d of %d masters answer, a quorum needs %d (%s)", len(ms)-len(failed), len(ms), ms.quorum(), strings.Join(failed, "; "))
	}
	return nil
}

// setup reads the node list, connects, and checks that a quorum answers.
// On failure it has printed the error and returns the exit status.
func setup(ctx context.Context, name string, c *common, e env) (masters, int, bool) {
	cfgs, err := nodeList(c.nodes, e)
	if err != nil {
		return nil, e.failf(exitUsage, "%s: %v", name, err), false
	}
	ms := connect(cfgs)
	if err := ms.probe(ctx, time.Duration(c.nodeTimeout)+time.Second); err != nil {
		ms.Close()
		return nil, e.failf(exitUnavailable, "%s: %v", name, err), false
	}
	return ms, 0, true
}

// identitiesReadable fails when more masters than the set tolerates
// refuse to say which process they are (INFO refused: an ACL without
// +info, or INFO renamed). The library's restart guard refuses every grant
// of such a master (a misconfiguration, ErrInvalid), so no quorum could
// ever grant the lock; a waiting Lock would wait for nothing until its
// context ended. A master whose Node has not read its process asks INFO
// once more, each call under timeout.
func (ms masters) identitiesReadable(ctx context.Context, timeout time.Duration) error {
	refusals := make([]error, len(ms))
	ms.each(ctx, timeout, func(ctx context.Context, i int, n *pool.Node) {
		if _, err := n.Identity(); err == nil {
			return
		}
		if _, err := n.Do(ctx, "INFO", "server"); err != nil && isReply(err) {
			refusals[i] = err
		}
	})
	var refused []string
	for i, err := range refusals {
		if err != nil {
			refused = append(refused, fmt.Sprintf("%s: %v", ms[i].Addr(), err))
		}
	}
	if len(refused) <= len(ms)-ms.quorum() {
		return nil
	}
	return fmt.Errorf("%d of %d masters refuse INFO to this client (%s): the restart guard cannot read which process they are, and refuses their grants, so no quorum can grant the lock; let the user run INFO (ACL SETUSER <user> +info; see redlock doctor)",
		len(refused), len(ms), strings.Join(refused, "; "))
}

// isReply reports whether err is the master's error reply (the command
// ran and was refused), not a failure to reach it.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
