package main

import (
	"context"
	"os"
	"os/signal"
)

// catch starts catching signals, from the start of a command: one that
// arrives while it waits (for a lock, for a leadership) ends the wait.
// stop stops catching them.
func catch(signals ...os.Signal) (sigs chan os.Signal, stop func()) {
	sigs = make(chan os.Signal, 8)
	signal.Notify(sigs, signals...)
	return sigs, func() { signal.Stop(sigs) }
}

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
