#!/usr/bin/env bash
# The main job: the chaos suite on locally started redis-server masters, with
# its report. Installs redis-server first where it is missing (see
# ensure-redis.sh). Arguments go to the chaos command (e.g. --short, --json,
# --soak 30m, --scenario safe-reentrant).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-redis.sh
cd chaos
exec go run ./cmd/chaos "$@"
