package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

func (p *prober) lateReadExtend(ctx context.Context) error {
	key := p.e.Key(p.name)
	reader, err := p.a.record(checker.Event{Key: p.name, Shared: true}, target{mode: modeZset, key: "{" + key + "}:r"},
		func() (*redlock.Lock, error) { return p.a.Locker.RWMutex(key).TryRLock(ctx, staleTTL) })
	if err != nil {
		return harness(err)
	}
	// The Extend is sent before the reader's Until, and lands well after
	// it expired, while a writer takes the lock.
	const latency = 2 * staleTTL
	if err := p.links(ctx, p.a, fault.Slow, latency); err != nil {
		return err
	}
	extended := make(chan struct{})
	sent := time.Now()
	go func() {
		defer close(extended)
		xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
		reader.Lock.Extend(xctx, probeTTL)
		cancel()
		reader.noteUntil()
	}()
	wctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	writer, werr := p.b.record(checker.Event{Key: p.name, Waits: true}, target{mode: modeString, key: "{" + key + "}:w"},
		func() (*redlock.Lock, error) { return p.b.Locker.RWMutex(key).Lock(wctx, probeTTL) })
	cancel()
	<-extended
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	if werr == nil {
		// Watch the masters until well after the late Extend arrived.
		for end := sent.Add(latency + 2*NodeTimeout); time.Now().Before(end) && !p.b.besideWriter(ctx, p.name); {
			time.Sleep(5 * time.Millisecond)
		}
		p.e.sample(ctx, writer)
		p.e.sample(ctx, reader)
		p.unlock(ctx, writer, "unlock of a writer after a late read Extend")
	} else if herr := harness(werr); herr != nil {
		return herr
	}
	p.unlock(ctx, reader, "unlock of a reader whose Extend landed late")
	return nil
}
