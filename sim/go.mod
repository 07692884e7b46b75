module github.com/quorumlock/quorumlock/sim

go 1.26.0

replace github.com/quorumlock/quorumlock => ../

replace github.com/quorumlock/quorumlock/chaos => ../chaos

// The chaos module's packages that the simulator imports are tested with
// the adapters (chaos/mutation's tests run its scenarios): go mod tidy
// resolves them here as chaos/go.mod does.
replace github.com/quorumlock/quorumlock/adapters/goredis => ../adapters/goredis

replace github.com/quorumlock/quorumlock/adapters/rueidis => ../adapters/rueidis

replace github.com/quorumlock/quorumlock/adapters/valkeygo => ../adapters/valkeygo

require (
	github.com/gomodule/redigo v1.9.3
	github.com/quorumlock/quorumlock v0.1.0
	github.com/quorumlock/quorumlock/chaos v0.1.0
	github.com/yuin/gopher-lua v1.1.2
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
)
