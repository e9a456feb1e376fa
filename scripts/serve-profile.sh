#!/usr/bin/env bash
# serve's CPU on N GC-busy targets (the workload's idle mode with a GC
# every 100 ms, as BenchmarkServeCost's "busy"), side by side in one run:
# for each of ROUNDS rounds, serve alone over WINDOW (its ticks from
# /proc/PID/stat), then, with SERVE_COUNTERS set to a dotnet-counters
# binary, N `dotnet-counters collect` (one per target, the same
# System.Runtime counters every second, summed). SERVE_BIN_B=path runs a
# second serve binary (e.g. main's) after the first in every round, to
# compare two builds. With CLRSPY_CPUPROFILE=FILE the first serve's Go
# CPU profile of the last round is written there (go tool pprof -top FILE).
#
#   scripts/serve-profile.sh                      # 10 targets, 3 rounds of 30 s
#   N=10 ROUNDS=5 WINDOW=20 SERVE_COUNTERS=/tmp/tools/dotnet-counters scripts/serve-profile.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ../shared/bin/go-env.sh
N=${N:-10} ROUNDS=${ROUNDS:-3} WINDOW=${WINDOW:-30}
make -s workload >/dev/null
tmp=$(mktemp -d)
go build -o "$tmp/clrspy" ./cmd/clrspy
A=$tmp/clrspy B=${SERVE_BIN_B:-}
hz=$(getconf CLK_TCK)
name=SvP$$
ln -s "$PWD/testdata/workloads/bin/net10.0/Workload" "$tmp/$name"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'exit 1' INT TERM
# The targets' stdin (stdin=1: a line or its end stops them) stays open
# while this script runs.
mkfifo "$tmp/in"
exec 3<>"$tmp/in"
for i in $(seq "$N"); do
	"$tmp/$name" idle seconds=3600 allocKB=64 stdin=1 gcEveryMs=100 <"$tmp/in" >/dev/null 2>&1 &
	pids+=($!)
done
sleep 5
ticks() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# cpu PID...: the processes' CPU share of one core over WINDOW seconds.
cpu() {
	local t0=0 t1=0 p
	for p in "$@"; do t0=$((t0 + $(ticks "$p"))); done
	sleep "$WINDOW"
	for p in "$@"; do t1=$((t1 + $(ticks "$p"))); done
	awk -v d=$((t1 - t0)) -v hz="$hz" -v w="$WINDOW" 'BEGIN{printf "%.2f", 100*d/hz/w}'
}
serve() { # serve BIN PROFILE: CPU share of one serve on the targets
	local bin=$1 prof=$2 sp
	CLRSPY_CPUPROFILE=$prof "$bin" serve --listen 127.0.0.1:0 --name "$name" --level warn >/dev/null 2>&1 &
	sp=$!
	sleep 12 # every session open, past their start
	cpu "$sp"
	kill -INT "$sp"; wait "$sp" 2>/dev/null || true
}
echo "# $(date -u +%FT%TZ) $(nproc) cores, $N targets, $ROUNDS rounds of ${WINDOW}s, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	prof=
	[ "$r" = "$ROUNDS" ] && prof=${CLRSPY_CPUPROFILE:-}
	line="round $r: serve $(serve "$A" "$prof") %"
	[ -n "$B" ] && line="$line, serve B $(serve "$B" '') %"
	if [ -n "${SERVE_COUNTERS:-}" ]; then
		cps=()
		for p in "${pids[@]}"; do
			"$SERVE_COUNTERS" collect -p "$p" --refresh-interval 1 --format csv -o "$tmp/c$p.csv" >/dev/null 2>&1 </dev/null &
			cps+=($!)
		done
		sleep 12
		line="$line, $N dotnet-counters $(cpu "${cps[@]}") %"
		kill -INT "${cps[@]}" 2>/dev/null || true
		sleep 3
		kill -KILL "${cps[@]}" 2>/dev/null || true
		wait "${cps[@]}" 2>/dev/null || true
	fi
	echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
done
