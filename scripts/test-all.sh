#!/usr/bin/env bash
# Runs every check CI runs: gofmt, go mod tidy, go vet and go test -race in
# every Go module of the repository. Installs redis-server where it is
# missing (ensure-redis.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

./scripts/ensure-redis.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" $unformatted >&2
  exit 1
fi

status=0
for mod in $(find . -name go.mod -not -path '*/testdata/*' | sort); do
  dir=$(dirname "$mod")
  echo "=== module $dir"
  (
    cd "$dir"
    go mod tidy -diff >/dev/null || { echo "go mod tidy would change $dir/go.mod or go.sum" >&2; exit 1; }
    go vet ./...
    go test -race -count=1 -timeout 15m ./...
  ) || status=1
done
exit $status
