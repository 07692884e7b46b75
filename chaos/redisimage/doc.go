// Package redisimage builds a Redis image for the Docker backend of the chaos
// harness on machines that reach no image registry: an image FROM scratch
// holding the host's redis-server binary and the shared libraries it links.
//
// The build is the shell script build-image.sh in this directory, embedded
// here so that the Go tests and the chaos command run exactly what a person
// runs by hand:
//
//	chaos/redisimage/build-image.sh            # tags quorumlock/redis-local:latest
//	QUORUMLOCK_REDIS_IMAGE=quorumlock/redis-local:latest go run ./cmd/chaos --backend docker
package redisimage
