package main

import (
	"context"
	"os"
)

// untilSignal runs fn with a context that a signal from sigs cancels, and
// returns the signal, if one came, and fn's error.
func untilSignal(sigs <-chan os.Signal, fn func(ctx context.Context) error) (os.Signal, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan os.Signal, 1)
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case s := <-sigs:
			got <- s
			cancel()
		case <-stop:
		}
	}()
	err := fn(ctx)
	close(stop)
	<-watched
	select {
	case s := <-got:
		return s, err
	default:
		return nil, err
	}
}
