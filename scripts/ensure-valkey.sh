#!/usr/bin/env bash
# Makes sure valkey-server is on PATH, for the test pass against Valkey
# (test-all.sh): installs Debian's valkey-server when it is missing and this
# is a root shell with apt-get (on Debian 12 from bookworm-backports, whose
# line it adds to the apt sources if none has it), and stops the system-wide
# server the package starts; otherwise says in one line what to do and
# fails. Run by .ci/run and test-all.sh.
set -euo pipefail

if command -v valkey-server >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "valkey-server not found: install it (Debian 12: apt-get install -t bookworm-backports valkey-server) and run this again" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
release=()
if [ "$codename" = bookworm ]; then
  # Valkey 8 is in bookworm-backports, not in bookworm itself.
  if ! grep -rqs '^[^#]*bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/bookworm-backports.list
  fi
  release=(-t bookworm-backports)
fi
echo "valkey-server not found: installing Debian's valkey-server ${release[*]}" >&2
apt-get update -qq
apt-get install -y -qq "${release[@]}" valkey-server >/dev/null
# The package starts a system-wide server; the tests start their own.
if command -v systemctl >/dev/null; then systemctl stop valkey-server 2>/dev/null || true; fi
service valkey-server stop >/dev/null 2>&1 || true
valkey-server --version
