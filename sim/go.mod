module github.com/quorumlock/quorumlock/sim

go 1.26.0

replace github.com/quorumlock/quorumlock => ../

replace github.com/quorumlock/quorumlock/chaos => ../chaos

require (
	github.com/quorumlock/quorumlock v0.1.0
	github.com/quorumlock/quorumlock/chaos v0.1.0
	github.com/yuin/gopher-lua v1.1.2
)

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
)
