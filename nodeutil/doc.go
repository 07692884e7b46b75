// Package nodeutil holds what a redlock.Node over a client library needs
// besides wake on release (package pubsub), so that the adapters in this
// repository, and one written elsewhere, share it instead of copying it:
// arguments formatted as redigo (and so *pool.Node) formats them, an error
// reply's message as the master sent it, the argument list of a prepared
// script call taken apart, and a client made lazily, so that a Node can be
// built while its master is down.
//
// It depends on the standard library only.
package nodeutil
