package pubsub_test

import (
	"context"
	"fmt"
	"log"

	"github.com/quorumlock/quorumlock/pubsub"
)

// A Node gives the Registry its client's pub/sub connections (here an
// in-memory master's) and forwards Subscribe to it; a waiter is woken by
// a message on its channel.
func Example() {
	m := newMaster()
	subs := pubsub.New(pubsub.Config{Dial: m.dial})
	defer subs.Close()

	released := make(chan struct{}, 1)
	unsubscribe, err := subs.Subscribe(context.Background(), "release:{orders}", released)
	if err != nil {
		log.Fatal(err) // wait by polling alone
	}
	defer unsubscribe()

	m.publish("release:{orders}") // the holder's release script PUBLISHes
	<-released
	fmt.Println("woken by the release")
	// Output: woken by the release
}
