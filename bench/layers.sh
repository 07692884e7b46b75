#!/bin/sh
# layers.sh measures what each performance layer of pool's pipelined
# transport earns (pool/layers.go): the Go benchmarks with every layer on
# against the same with one layer off, built once per configuration and
# run in interleaved chunks, so that the machine's noise spreads over all
# of them. The load average before each run goes to load.txt, and every
# benchmark reports the CPU steal during its run (steal-%).
#
#	./layers.sh                          # every layer, the rows of bench/README.md
#	LAYERS="evalfirst" BENCH='FreshConnection/nodes=(1|5)' ./layers.sh
#
# Settings (environment): LAYERS (the layers to turn off, one at a time;
# default all), BENCH (the -bench pattern), CHUNKS and COUNT (CHUNKS
# rounds of COUNT runs per configuration; default 5 and 2, so -count 10 in
# all), OUT (the directory of the results; default out/layers). benchstat
# (golang.org/x/perf/cmd/benchstat) must be on PATH.
set -eu
cd "$(dirname "$0")"
LAYERS=${LAYERS:-combine yield recycle evalfirst}
BENCH=${BENCH:-'(LockUnlock|Throughput)/nodes=(1|5)/impl=quorumlock$'}
CHUNKS=${CHUNKS:-5}
COUNT=${COUNT:-2}
OUT=${OUT:-out/layers}
mkdir -p "$OUT"
configs="on $LAYERS"
for c in $configs; do
	off=$c
	[ "$c" = on ] && off=
	GOWORK=off go test -c -o "$OUT/$c.test" -ldflags="-X=github.com/quorumlock/quorumlock/pool.layersOff=$off" .
	: >"$OUT/$c.txt"
done
: >"$OUT/load.txt"
set -- $configs
for i in $(seq "$CHUNKS"); do
	for c in "$@"; do
		echo "chunk $i $c: $(uptime)" >>"$OUT/load.txt"
		"./$OUT/$c.test" -test.run '^$' -test.bench "$BENCH" -test.count "$COUNT" >>"$OUT/$c.txt"
	done
	first=$1 # the next chunk starts with the next configuration
	shift
	set -- "$@" "$first"
done
for c in $LAYERS; do
	echo "== $c off"
	benchstat all-on="$OUT/on.txt" "$c-off=$OUT/$c.txt"
done
