#!/usr/bin/env bash
# The main job: the chaos suite on locally started masters, with its
# report. Installs what its scenarios need first where it is missing:
# redis-server (ensure-redis.sh), and valkey-server (ensure-valkey.sh) for
# the scenarios that need WAITAOF (the durability twins, durable-idle),
# which Redis 7.0 lacks; without it those are reported as SKIP, saying
# why. Arguments go to the chaos command (e.g. --short, --json, --soak 30m,
# --scenario safe-reentrant). Then the deterministic simulator (sim/)
# explores seeded schedules for QUORUMLOCK_SIM_DURATION (default 1m; 0
# leaves it out, as does --json) and prints its summary beside the report.
# The exit status is 1 when either found a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-redis.sh
./scripts/ensure-valkey.sh || echo "chaos.sh: the WAITAOF scenarios will be skipped (see above)" >&2
status=0
(cd chaos && go run ./cmd/chaos "$@") || status=$?
sim=${QUORUMLOCK_SIM_DURATION-1m}
case " $* " in *" --json "* | *" -json "*) sim=0 ;; esac
if [ "$sim" != 0 ]; then
  echo
  echo "=== the deterministic simulator, $sim of seeded schedules (sim/README.md)"
  (cd sim && go run ./cmd/sim --duration "$sim" --quiet) || status=1
fi
exit "$status"
