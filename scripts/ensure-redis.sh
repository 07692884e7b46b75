#!/usr/bin/env bash
# Makes sure redis-server is on PATH: installs Debian's package when it is
# missing and this is a root shell with apt-get; otherwise says in one line
# what to do and fails. Sourced or run by the other scripts.
set -euo pipefail

if ! command -v redis-server >/dev/null; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "redis-server not found: install it (e.g. sudo apt-get install -y redis-server) and run this again" >&2
    exit 1
  fi
  echo "redis-server not found: installing Debian's redis-server package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq redis-server >/dev/null
  # The package starts a system-wide server; the tests and the harness start their own.
  if command -v systemctl >/dev/null; then systemctl stop redis-server 2>/dev/null || true; fi
  service redis-server stop >/dev/null 2>&1 || true
fi
