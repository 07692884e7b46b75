package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncredigo "github.com/go-redsync/redsync/v4/redis/redigo"
	"github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
)

// redsyncNodeTimeout is redsync's per-node timeout at its defaults: expiry
// 8s times timeout factor 0.05.
const redsyncNodeTimeout = 400 * time.Millisecond

// newRedigoPools makes one redigo pool per address, as a redsync user (or
// the raw limit) would: MaxIdle and dial timeout from s, and, when
// deadlines is set, read and write timeouts of redsyncNodeTimeout.
func newRedigoPools(addrs []string, s Settings, deadlines bool) []*redis.Pool {
	opts := []redis.DialOption{redis.DialConnectTimeout(s.DialTimeout)}
	if deadlines {
		opts = append(opts, redis.DialReadTimeout(redsyncNodeTimeout), redis.DialWriteTimeout(redsyncNodeTimeout))
	}
	pools := make([]*redis.Pool, len(addrs))
	for i, addr := range addrs {
		pools[i] = &redis.Pool{
			MaxIdle:     s.PoolSize,
			IdleTimeout: 5 * time.Minute,
			DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr, opts...)
			},
		}
	}
	return pools
}

func closePools(pools []*redis.Pool) error {
	var errs []error
	for _, p := range pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// redsyncLocker runs github.com/go-redsync/redsync/v4 over its redigo
// adapter.
type redsyncLocker struct {
	rs       *redsync.Redsync
	pools    []*redis.Pool
	opts     []redsync.Option
	failFast bool
}

func newRedsync(failFast, deadlines bool) func([]string, Settings) (Locker, error) {
	return func(addrs []string, s Settings) (Locker, error) {
		l := &redsyncLocker{pools: newRedigoPools(addrs, s, deadlines), failFast: failFast}
		adapted := make([]redsyncredis.Pool, len(l.pools))
		for i, p := range l.pools {
			adapted[i] = redsyncredigo.NewPool(p)
		}
		l.rs = redsync.New(adapted...)
		l.opts = []redsync.Option{redsync.WithExpiry(s.TTL)}
		if failFast {
			l.opts = append(l.opts, redsync.WithFailFast(true))
		}
		return l, nil
	}
}

func (l *redsyncLocker) NewMutex(key string) Mutex {
	return &redsyncMutex{l: l, key: key, m: l.rs.NewMutex(key, l.opts...)}
}

func (l *redsyncLocker) Close() error { return closePools(l.pools) }

// redsyncMutex reuses one redsync.Mutex, as redsync's examples do, except
// with fail-fast: there redsync returns while its goroutines for the slow
// nodes still read the Mutex, and the next Lock's write to it races with
// them, so each Lock gets a fresh one.
type redsyncMutex struct {
	l   *redsyncLocker
	key string
	m   *redsync.Mutex
}

func (m *redsyncMutex) Lock(ctx context.Context) error {
	if m.l.failFast {
		m.m = m.l.rs.NewMutex(m.key, m.l.opts...)
	}
	return m.m.LockContext(ctx)
}

func (m *redsyncMutex) Unlock(ctx context.Context) error {
	// redsync reports a quorum's release as success and drops the other
	// nodes' errors.
	ok, err := m.m.UnlockContext(ctx)
	if ok {
		return nil
	}
	if err == nil {
		err = ErrNotHeld
	}
	return err
}

// redislockLocker runs github.com/bsm/redislock on a go-redis client: one
// Redis, no quorum.
type redislockLocker struct {
	rdb *goredis.Client
	c   *redislock.Client
	ttl time.Duration
	opt *redislock.Options
}

func newRedislock(addrs []string, s Settings) (Locker, error) {
	if len(addrs) != 1 {
		return nil, errors.New("bench: redislock supports one node")
	}
	rdb := goredis.NewClient(&goredis.Options{
		Addr:        addrs[0],
		PoolSize:    s.PoolSize,
		DialTimeout: s.DialTimeout,
	})
	return &redislockLocker{
		rdb: rdb,
		c:   redislock.New(rdb),
		ttl: s.TTL,
		opt: &redislock.Options{RetryStrategy: redislock.LinearBackoff(s.Retry)},
	}, nil
}

func (l *redislockLocker) NewMutex(key string) Mutex { return &redislockMutex{l: l, key: key} }

func (l *redislockLocker) Close() error { return l.rdb.Close() }

type redislockMutex struct {
	l    *redislockLocker
	key  string
	held *redislock.Lock
}

func (m *redislockMutex) Lock(ctx context.Context) error {
	lk, err := m.l.c.Obtain(ctx, m.key, m.l.ttl, m.l.opt)
	if err != nil {
		return err
	}
	m.held = lk
	return nil
}

func (m *redislockMutex) Unlock(ctx context.Context) error {
	lk := m.held
	m.held = nil
	return lk.Release(ctx)
}

// The compare-and-delete script of the raw limit (the same as every
// library's).
const rawUnlockSrc = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// rawLocker is the cost floor: the bare commands of one lock cycle, fanned
// out to every node at once.
type rawLocker struct {
	pools     []*redis.Pool
	ttlMillis int64
	quorum    int32
	unlockSHA string
}

func newRaw(addrs []string, s Settings) (Locker, error) {
	l := &rawLocker{
		pools:     newRedigoPools(addrs, s, true),
		ttlMillis: s.TTL.Milliseconds(),
		quorum:    int32(len(addrs)/2 + 1),
	}
	for _, p := range l.pools {
		c := p.Get()
		sha, err := redis.String(c.Do("SCRIPT", "LOAD", rawUnlockSrc))
		c.Close()
		if err != nil {
			closePools(l.pools)
			return nil, err
		}
		l.unlockSHA = sha
	}
	return l, nil
}

func (l *rawLocker) NewMutex(key string) Mutex { return &rawMutex{l: l, key: key} }

func (l *rawLocker) Close() error { return closePools(l.pools) }

// fanout sends one command to every node, node 0 from the calling
// goroutine, and returns how many answered OK or 1.
func (l *rawLocker) fanout(cmd string, args ...any) int32 {
	var yes atomic.Int32
	var wg sync.WaitGroup
	for i := 1; i < len(l.pools); i++ {
		wg.Go(func() {
			if l.do(i, cmd, args) {
				yes.Add(1)
			}
		})
	}
	if l.do(0, cmd, args) {
		yes.Add(1)
	}
	wg.Wait()
	return yes.Load()
}

func (l *rawLocker) do(i int, cmd string, args []any) bool {
	c := l.pools[i].Get()
	reply, err := c.Do(cmd, args...)
	if err != nil && cmd == "EVALSHA" && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		reply, err = c.Do("EVAL", append([]any{rawUnlockSrc}, args[1:]...)...)
	}
	c.Close()
	return err == nil && (reply == "OK" || reply == int64(1))
}

type rawMutex struct {
	l     *rawLocker
	key   string
	token string
}

func (m *rawMutex) Lock(context.Context) error {
	var b [16]byte
	rand.Read(b[:])
	m.token = hex.EncodeToString(b[:])
	if m.l.fanout("SET", m.key, m.token, "NX", "PX", m.l.ttlMillis) >= m.l.quorum {
		return nil
	}
	m.l.fanout("EVALSHA", m.l.unlockSHA, 1, m.key, m.token)
	return ErrNotAcquired
}

func (m *rawMutex) Unlock(context.Context) error {
	if m.l.fanout("EVALSHA", m.l.unlockSHA, 1, m.key, m.token) < m.l.quorum {
		return ErrNotHeld
	}
	return nil
}
