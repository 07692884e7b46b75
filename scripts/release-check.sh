#!/usr/bin/env bash
# Installability check (test-all.sh runs it): builds a file-based module
# proxy from the tree at the versions the versions file records, then, in a
# module outside the repository without any replace directive, resolves the
# repository's modules through it (go get MODULE@VERSION), builds a program
# that uses the library and every adapter, installs the redlock command at
# its version (go install .../cmd/redlock@VERSION) and checks that
# `redlock version` says it.
#
# The repository's modules come only from that proxy, through a module
# cache of the check's own (nothing from an earlier run is reused) and
# without the checksum database (they are not published: GONOSUMDB).
# Third-party modules come from the local module cache when the
# repository's tests downloaded them, else from proxy.golang.org; their
# checksums are the repository's go.sum lines.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export GOWORK=off
core=github.com/quorumlock/quorumlock
version() { awk -v d="$1" '$1 == d { print $2 }' "$root/versions"; }

tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
(cd scripts/release && go run . proxy "$tmp/proxy" >/dev/null)

cache=$(go env GOMODCACHE)/cache/download
export GOPROXY="file://$tmp/proxy,file://$cache,https://proxy.golang.org"
export GONOSUMDB=$core GOFLAGS="-modcacherw -trimpath" GOMODCACHE=$tmp/modcache GOBIN=$tmp/bin

mkdir "$tmp/consumer"
cd "$tmp/consumer"
cat >go.mod <<'MOD'
module example.com/consumer

go 1.25.0
MOD
cat "$root"/go.sum "$root"/*/*/go.sum | sort -u >go.sum
cat >main.go <<'GO'
// Command consumer uses the library and every adapter as a service would,
// from modules resolved through a module proxy.
package main

import (
	"fmt"

	"github.com/quorumlock/quorumlock"
	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/adapters/otel"
	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest/inmem"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/valkey-io/valkey-go"
)

func main() {
	g, err := goredis.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}))
	if err != nil {
		panic(err)
	}
	r, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6380"}})
	if err != nil {
		panic(err)
	}
	v, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{"127.0.0.1:6381"}})
	if err != nil {
		panic(err)
	}
	nodes := []redlock.Node{g, r, v, pool.New(pool.Config{Addr: "127.0.0.1:6382"})}
	_, err = redlock.New(nodes, redlock.Config{Observer: otel.NewObserver()})
	fmt.Println(quorumlock.Version(), err, inmem.New != nil)
}
GO
for dir in . adapters/goredis adapters/otel adapters/rueidis adapters/valkeygo redlocktest/inmem; do
  mod=$core
  [ "$dir" = . ] || mod=$core/$dir
  go get "$mod@$(version "$dir")"
done

if grep -q '^replace' go.mod; then
  echo "release-check: the consumer's go.mod has a replace directive" >&2
  exit 1
fi
go build -o consumer .
./consumer | grep -q "^$(version .) " || { echo "release-check: the consumer does not report the core's version" >&2; exit 1; }

# The harness and the benchmarks resolve too, at their versions.
go mod download "$core/chaos@$(version chaos)" "$core/bench@$(version bench)"

go install "$core/cmd/redlock@$(version .)"
"$GOBIN/redlock" version
"$GOBIN/redlock" version --json | grep -q "\"command\": \"$(version .)\"" ||
  { echo "release-check: redlock version does not say $(version .)" >&2; exit 1; }
echo "release-check: every module resolved and built through the proxy at its version"
