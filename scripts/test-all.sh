#!/usr/bin/env bash
# Runs every check CI runs: gofmt, then go mod tidy, go vet, staticcheck and
# go test -race in every Go module of the repository, the installability
# check (release-check.sh: a consumer module builds through a module proxy
# made from the tree), the conformance suite, the adapters' tests and the
# short chaos suite again against valkey-server, and the chaos suite's
# mutation self-test (every deliberate defect must make a short scenario
# fail; two defects at a time, each in a copy of its own), which runs
# beside the modules after chaos, the installability check and the valkey
# pass. Installs redis-server
# and valkey-server where they are missing (ensure-redis.sh,
# ensure-valkey.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each module is checked on its own go.mod, as its users build it; go.work is
# for working across the modules by hand. Where Docker is present, the chaos
# suite's scenarios run on the Docker backend too, four of them here (the
# backend's own tests are in chaos/cluster; all of them run on local
# masters); QUORUMLOCK_CHAOS_DOCKER_SCENARIOS= (empty) runs all 24 there.
export GOWORK=off

./scripts/ensure-redis.sh
./scripts/ensure-valkey.sh

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "gofmt would change:" $unformatted >&2
  exit 1
fi

# staticcheck, pinned to one release so that CI does not change under us.
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.7.0

# The chaos suite's mutation self-test (its baseline, the scenarios
# unmutated, is the chaos module's own tests) is mostly builds: a copy of
# the tree per defect, two at a time, and it is CI's longest part. So the
# chaos module is checked first, on a quiet machine (its scenarios keep
# time), and the self-test starts in the background right after it,
# beside the other modules, the release check and the valkey pass of the
# packages' tests, whose results no timing decides; the valkey pass of the
# chaos scenarios, which keep time, runs once it is done. Its output comes
# after theirs.
mutation_log=$(mktemp)
mutation_pid=
start_mutation() {
  echo "=== chaos mutation self-test, in the background (at ${SECONDS}s)"
  ./chaos/mutation/run.sh --parallel 2 --skip-baseline >"$mutation_log" 2>&1 &
  mutation_pid=$!
}

status=0
modules=$(find . -name go.mod -not -path '*/testdata/*' | sort)
for mod in ./chaos/go.mod $(grep -vx './chaos/go.mod' <<<"$modules"); do
  dir=$(dirname "$mod")
  echo "=== module $dir (at ${SECONDS}s)"
  # Each check's failure fails the module: set -e does not apply inside a
  # subshell whose status is tested, so the checks are chained explicitly.
  (
    cd "$dir" &&
      { go mod tidy -diff >/dev/null || { echo "go mod tidy would change $dir/go.mod or go.sum" >&2; false; }; } &&
      go vet ./... &&
      go run "$staticcheck" ./... &&
      QUORUMLOCK_CHAOS_DOCKER_SCENARIOS=${QUORUMLOCK_CHAOS_DOCKER_SCENARIOS-safe-minority,restart-unsafe,paused-holder,safe-plain} \
        go test -race -count=1 -timeout 15m ./...
  ) || { echo "=== module $dir FAILED" >&2; status=1; }
  if [ "$dir" = ./chaos ]; then start_mutation; fi
done
if [ -z "$mutation_pid" ]; then start_mutation; fi

# Installable: a module outside the repository resolves and builds the
# repository's modules through a module proxy made from the tree.
echo "=== release check (at ${SECONDS}s)"
log=$(mktemp)
if ./scripts/release-check.sh >"$log" 2>&1; then
  tail -1 "$log"
else
  cat "$log" >&2
  echo "=== release check FAILED" >&2
  status=1
fi
rm -f "$log"

# Valkey beside Redis: the tests start their servers with the binary that
# QUORUMLOCK_SERVER names (internal/redisproc). The race detector has had its
# run above; this pass is about the server.
for target in .:./redlocktest/... adapters/goredis:./... adapters/rueidis:./... adapters/valkeygo:./...; do
  dir=${target%%:*} pkgs=${target#*:}
  echo "=== $dir $pkgs against valkey-server (at ${SECONDS}s)"
  (cd "$dir" && QUORUMLOCK_SERVER=valkey-server go test -count=1 -timeout 10m "$pkgs") ||
    { echo "=== $dir against valkey-server FAILED" >&2; status=1; }
done

mutation_status=0
wait "$mutation_pid" || mutation_status=$?
echo "=== chaos mutation self-test, done (at ${SECONDS}s)"
cat "$mutation_log"
rm -f "$mutation_log"
if [ "$mutation_status" != 0 ]; then
  echo "=== chaos mutation self-test FAILED" >&2
  status=1
fi

# The restart matrix's transport x lifetime scenarios and the command's
# two are left out here: what they add to the others is the client side
# (every Node type and process lifetime), which the pass above ran, and
# each Node type's reading of valkey's INFO runs in its adapter's tests
# just above. So are the generative scenarios of one lock kind each: their
# scripts run against valkey in safe-mixed (every kind at once) and in
# redlocktest's conformance suite above; what is left is what the server
# decides (restarts, persistence, WAITAOF, failover, INFO, quorum).
echo "=== chaos short suite against valkey-server (at ${SECONDS}s)"
(cd chaos && QUORUMLOCK_SERVER=valkey-server QUORUMLOCK_CHAOS_DOCKER=0 go test -count=1 -timeout 10m -run '^TestScenarios$/^local$' \
  -skip '^TestScenarios$/^local$/^(restart-(pipelined|pooled|goredis|rueidis|valkeygo)-|restart-command$|safe-(command|plain|reentrant|rw|renew|extend|semaphore|multi|fair)$)' ./scenario) ||
  { echo "=== chaos short suite against valkey-server FAILED" >&2; status=1; }

echo "=== done in ${SECONDS}s, status $status"
exit $status
