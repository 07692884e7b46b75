module github.com/quorumlock/quorumlock/redlocktest/inmem

go 1.25.0

require (
	github.com/alicebob/miniredis/v2 v2.40.0
	github.com/quorumlock/quorumlock v0.1.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/gomodule/redigo v1.9.3 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	github.com/yuin/gopher-lua v1.1.1 // indirect
)

replace github.com/quorumlock/quorumlock => ../..
