package redlock_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Lock two accounts for a transfer, both or neither. On Redis Cluster
// masters give the keys one hash tag, as here.
func ExampleLocker_LockMulti() {
	// In a real program: pool.New nodes for your masters, as in ExampleNew.
	locker, err := redlock.New(exampleNodes(), redlock.Config{})
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	lk, err := locker.LockMulti(ctx, []string{"{bank}:acct:1", "{bank}:acct:7"}, 10*time.Second)
	if err != nil {
		log.Fatal(err) // neither key is held
	}
	fmt.Println("locked", lk.Keys())

	// A plain lock of either account is refused meanwhile.
	if _, err := locker.TryLock(ctx, "{bank}:acct:7", 10*time.Second); err != nil {
		fmt.Println("acct:7 busy")
	}

	if err := lk.Unlock(context.Background()); err != nil {
		log.Fatal(err)
	}
	fmt.Println("unlocked")
	// Output:
	// locked [{bank}:acct:1 {bank}:acct:7]
	// acct:7 busy
	// unlocked
}
