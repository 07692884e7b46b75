#!/usr/bin/env bash
# The main job: the chaos suite on locally started masters, with its
# report. Installs what its scenarios need first where it is missing:
# redis-server (ensure-redis.sh), and valkey-server (ensure-valkey.sh) for
# the scenarios that need WAITAOF (the durability twins, durable-idle),
# which Redis 7.0 lacks; without it those are reported as SKIP, saying
# why. Arguments go to the chaos command (e.g. --short, --json, --soak 30m,
# --scenario safe-reentrant).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/ensure-redis.sh
./scripts/ensure-valkey.sh || echo "chaos.sh: the WAITAOF scenarios will be skipped (see above)" >&2
cd chaos
exec go run ./cmd/chaos "$@"
