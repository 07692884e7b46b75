package rueidis

import "github.com/redis/rueidis"

// hooks registers message and subscription as the pub/sub hooks of d, a
// dedicated connection of the client, and returns the channel that reports
// d's end: wake on release (pubsub.Registry, in nodeutil.ClientNode) reads
// what they deliver. It is the one piece of the Node that names rueidis's
// types beyond the constructors: a rueidis.PubSubHooks literal, which
// nodeutil cannot write (the struct has an unexported field).
func hooks(d rueidis.DedicatedClient, message func(channel string), subscription func(kind, channel string)) <-chan error {
	return d.SetPubSubHooks(rueidis.PubSubHooks{
		OnMessage:      func(m rueidis.PubSubMessage) { message(m.Channel) },
		OnSubscription: func(s rueidis.PubSubSubscription) { subscription(s.Kind, s.Channel) },
	})
}
