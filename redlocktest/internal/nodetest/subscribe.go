package nodetest

import (
	"context"
	"errors"
	"testing"

	"github.com/quorumlock/quorumlock/redlock"
)

// testSubscriber checks Abilities.Subscribe, when the Node has
// it: a message published after Subscribe returned arrives; after
// unsubscribe nothing is sent on the channel any more and the master
// forgets the subscription; a subscription outlives a restart of the
// master; Subscribe returns when its context ends.
func (s *suite) testSubscriber(t *testing.T) {
	if redlock.AbilitiesOf(s.node(t, 0)).Subscribe == nil {
		t.Skip("the Node has no Abilities.Subscribe: wake on release falls back to polling")
	}
	t.Run("Publish", s.testPublish)
	t.Run("Unsubscribe", s.testUnsubscribe)
	t.Run("EndedContext", s.testSubscribeEndedContext)
	t.Run("FrozenMaster", s.testSubscribeFrozen)
	t.Run("SurvivesRestart", s.testSubscribeRestart)
}

// subscribeFunc is Abilities.Subscribe.
type subscribeFunc = func(ctx context.Context, channel string, ch chan<- struct{}) (func(), error)

func (s *suite) subscriber(t *testing.T, i int) subscribeFunc {
	t.Helper()
	sub := redlock.AbilitiesOf(s.node(t, i)).Subscribe
	if sub == nil {
		t.Fatal("newNode made a Node without Abilities.Subscribe, unlike the first")
	}
	return sub
}

// subscribe subscribes ch to channel; it must succeed.
func subscribe(t *testing.T, sub subscribeFunc, channel string, ch chan<- struct{}) func() {
	t.Helper()
	unsub, err := sub(ctx(t), channel, ch)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", channel, err)
	}
	if unsub == nil {
		t.Fatalf("Subscribe(%q) returned a nil unsubscribe and no error", channel)
	}
	return unsub
}

// testPublish: each registration, two on one channel included, gets a
// send for a message published after Subscribe returned; a registration
// on another channel gets none.
func (s *suite) testPublish(t *testing.T) {
	sub, c := s.subscriber(t, 0), s.control(t, 0)
	channel, other := key(t), key(t)
	a, b, o := make(chan struct{}, 8), make(chan struct{}, 8), make(chan struct{}, 8)
	defer subscribe(t, sub, channel, a)()
	unsubB := subscribe(t, sub, channel, b)
	defer subscribe(t, sub, other, o)()
	if got := c.int("PUBLISH", channel, "1"); got < 1 {
		t.Fatalf("PUBLISH after Subscribe returned reached %d subscribers", got)
	}
	await(t, a, "the first registration")
	await(t, b, "the second registration")
	unsubB()
	c.int("PUBLISH", channel, "2")
	await(t, a, "the registration left after the other unsubscribed")
	// The other channel's registration heard none of it: a message on it,
	// published last, arrives before anything else could.
	c.int("PUBLISH", other, "3")
	await(t, o, "a registration on another channel")
	if len(o) != 0 {
		t.Errorf("a registration on another channel got %d extra sends", len(o))
	}
}

// testUnsubscribe: once unsubscribe returned, nothing more is sent on the
// channel, and the master forgets the subscription. A registration on
// another channel of the same Node is the marker that messages published
// before it were handled.
func (s *suite) testUnsubscribe(t *testing.T) {
	sub, c := s.subscriber(t, 0), s.control(t, 0)
	channel, marker := key(t), key(t)
	ch, mark := make(chan struct{}, 64), make(chan struct{}, 1)
	defer subscribe(t, sub, marker, mark)()
	unsub := subscribe(t, sub, channel, ch)
	c.int("PUBLISH", channel, "1")
	await(t, ch, "the registration")
	unsub()
	for len(ch) > 0 {
		<-ch
	}
	for range 5 {
		c.int("PUBLISH", channel, "after")
	}
	eventually(t, "the master forgets the subscription", func() bool { return c.numsub(channel) == 0 })
	c.int("PUBLISH", marker, "1")
	await(t, mark, "the marker registration")
	if len(ch) != 0 {
		t.Errorf("%d sends on the channel after unsubscribe returned", len(ch))
	}
}

// testSubscribeEndedContext: Subscribe with an ended context fails with an
// error that matches the context's and leaves nothing subscribed.
func (s *suite) testSubscribeEndedContext(t *testing.T) {
	sub, c, channel := s.subscriber(t, 0), s.control(t, 0), key(t)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	var (
		unsub func()
		err   error
	)
	returnsWithin(t, Bound, "Subscribe with a cancelled context", func() {
		unsub, err = sub(cctx, channel, make(chan struct{}, 1))
	})
	if err == nil {
		unsub()
		t.Fatal("Subscribe with a cancelled context succeeded")
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Subscribe with a cancelled context: err = %v, want one matching context.Canceled", err)
	}
	eventually(t, "nothing stays subscribed", func() bool { return c.numsub(channel) == 0 })
}

// testSubscribeFrozen: Subscribe to a master that answers nothing returns
// with an error when its context ends.
func (s *suite) testSubscribeFrozen(t *testing.T) {
	s.frozen(t, func(n redlock.Node, cctx context.Context) error {
		sub := redlock.AbilitiesOf(n).Subscribe
		if sub == nil {
			return errors.New("no Abilities.Subscribe")
		}
		unsub, err := sub(cctx, key(t), make(chan struct{}, 1))
		if err == nil {
			unsub()
		}
		return err
	})
}

// testSubscribeRestart: a subscription lasts until unsubscribe, across a
// restart of the master (which closes every connection): a message
// published once the master is back arrives.
func (s *suite) testSubscribeRestart(t *testing.T) {
	sub, channel := s.subscriber(t, 1), key(t)
	ch := make(chan struct{}, 64)
	defer subscribe(t, sub, channel, ch)()
	if err := s.masters[1].Restart(); errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot restart a master", s.b.Name)
	} else if err != nil {
		t.Fatal(err)
	}
	c := s.control(t, 1)
	eventually(t, "the subscription is back after the restart", func() bool { return c.numsub(channel) > 0 })
	for len(ch) > 0 { // a Node may wake its registrations after a reconnect
		<-ch
	}
	c.int("PUBLISH", channel, "1")
	await(t, ch, "a message published after the restart")
}
