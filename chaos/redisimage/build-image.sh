#!/usr/bin/env bash
# build-image.sh builds a minimal Redis image FROM scratch out of the host's
# redis-server binary and the shared libraries ldd lists for it, for machines
# that reach no image registry.
#
# Usage: build-image.sh [TAG]   (default TAG: quorumlock/redis-local:latest)
# Env:   REDIS_SERVER=/path/to/redis-server (default: redis-server on PATH)
#
# The image runs "redis-server ..." as its command, like the public redis:7
# image, so the harness passes the same arguments to both. Its data directory
# is /data.
set -euo pipefail

tag="${1:-quorumlock/redis-local:latest}"
bin="${REDIS_SERVER:-$(command -v redis-server || true)}"
if [ -z "$bin" ] || [ ! -x "$bin" ]; then
	echo "build-image.sh: redis-server not found (set REDIS_SERVER or install it)" >&2
	exit 1
fi
bin="$(readlink -f "$bin")"

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
root="$ctx/rootfs"
mkdir -p "$root/usr/local/bin" "$root/data" "$root/tmp" "$root/etc"

cp "$bin" "$root/usr/local/bin/redis-server"

# Every library ldd resolves ("name => /path (addr)") and the loader itself
# ("/lib64/ld-linux-x86-64.so.2 (addr)"), copied under the same path. Symlinked
# names are copied as the files they point to.
ldd "$bin" | awk '
	$2 == "=>" && $3 ~ /^\// { print $3 }
	$1 ~ /^\// { print $1 }
' | sort -u | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

# A user database, so that nothing in libc trips over a missing /etc/passwd.
printf 'root:x:0:0:root:/data:/usr/local/bin/redis-server\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"

cat >"$ctx/Dockerfile" <<'DOCKERFILE'
FROM scratch
COPY rootfs/ /
ENV PATH=/usr/local/bin:/usr/bin:/bin
WORKDIR /data
EXPOSE 6379
CMD ["redis-server", "--protected-mode", "no"]
DOCKERFILE

# The legacy builder prints a deprecation notice on stderr: show the output
# only when the build fails.
if ! out="$(docker build --quiet --tag "$tag" "$ctx" 2>&1)"; then
	echo "$out" >&2
	exit 1
fi
echo "$tag"
