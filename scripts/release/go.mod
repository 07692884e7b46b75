module github.com/quorumlock/quorumlock/scripts/release

go 1.25.0

replace github.com/quorumlock/quorumlock => ../..

require (
	github.com/quorumlock/quorumlock v0.1.0
	golang.org/x/mod v0.35.0
)
