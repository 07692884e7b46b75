module github.com/quorumlock/quorumlock/adapters/goredis

go 1.25.0

replace github.com/quorumlock/quorumlock => ../..

require (
	github.com/quorumlock/quorumlock v0.1.0
	github.com/redis/go-redis/v9 v9.20.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/gomodule/redigo v1.9.3 // indirect
	github.com/hashicorp/errwrap v1.0.0 // indirect
	github.com/hashicorp/go-multierror v1.1.1 // indirect
	go.uber.org/atomic v1.12.0 // indirect
)
