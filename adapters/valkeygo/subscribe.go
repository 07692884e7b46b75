package valkeygo

import "github.com/valkey-io/valkey-go"

// hooks registers message and subscription as the pub/sub hooks of d, a
// dedicated connection of the client, and returns the channel that reports
// d's end, for wake on release. The rest of the Node is nodeutil's; a
// valkey.PubSubHooks literal is not, since the struct has an unexported
// field.
func hooks(d valkey.DedicatedClient, message func(channel string), subscription func(kind, channel string)) <-chan error {
	return d.SetPubSubHooks(valkey.PubSubHooks{
		OnMessage:      func(m valkey.PubSubMessage) { message(m.Channel) },
		OnSubscription: func(s valkey.PubSubSubscription) { subscription(s.Kind, s.Channel) },
	})
}
