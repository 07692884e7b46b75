#!/bin/sh
# The chaos suite's mutation self-test, for CI: applies each deliberate
# defect of chaos/mutation to a temporary copy of the repository and runs
# the short scenarios that must catch it. Exit status 0 only when the
# baseline passes and every defect is caught. Arguments go to cmd/mutate
# (e.g. --all-scenarios, --defect NAME, --list).
set -eu
cd "$(dirname "$0")/.."
exec go run ./cmd/mutate "$@"
