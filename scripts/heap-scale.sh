#!/usr/bin/env bash
# The heap tracker's figures for docs/PERFORMANCE.md, for this tree and,
# alternating in the same run, for another revision (the shared machine's
# speed drifts too much to compare figures taken at different times):
#   1. BenchmarkRemapGC (one GC, 10^5 objects, 10^4 moved ranges), 3 rounds;
#   2. time and peak RSS of `clrspy heap` on generated traces of growing
#      size (allocation ticks, no movement events: the followed set only
#      grows);
#   3. RSS over time of `clrspy heap -` reading an endless generated stream.
#
#   scripts/heap-scale.sh [REV] [SIZES...]
#
# REV (default: none) is a git revision to build and compare with, e.g.
# main. SIZES default to 16MiB 32MiB 64MiB 512MiB. Environment: TIMEOUT
# (seconds per run, default 600; a run over it prints "> TIMEOUT s"),
# STREAM_SECONDS (default 100), PARTS (default "bench files stream").
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rev=${1:-}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(16MiB 32MiB 64MiB 512MiB)
timeout=${TIMEOUT:-600}
stream_seconds=${STREAM_SECONDS:-100}
parts=${PARTS:-bench files stream}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cd "$here"
export CGO_ENABLED=0
go build -trimpath -o "$work/after" ./cmd/clrspy
bins=(after)
if [ -n "$rev" ]; then
	mkdir "$work/src"
	git archive "$rev" | tar -x -C "$work/src"
	# The same CPU-time metric as this tree's benchmark (the machine is
	# shared: wall time per op moves with the others' load).
	if ! grep -q cpuTime "$work/src/heap/bench_test.go"; then
		sed -i -e 's|^\tb.ResetTimer()$|\tb.ResetTimer()\n\tcpu0 := cpuTime()|' \
			-e 's|^\tb.StopTimer()$|\tb.StopTimer()\n\tb.ReportMetric(float64(cpuTime()-cpu0)/1e6/float64(b.N), "cpu-ms/GC")|' \
			"$work/src/heap/bench_test.go"
		cat >"$work/src/heap/cpu_bench_test.go" <<'EOF2'
package heap

import (
	"syscall"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
EOF2
	fi
	(cd "$work/src" && go build -trimpath -o "$work/before" ./cmd/clrspy)
	bins=(before after)
fi

case " $parts " in *" bench "*)
echo "# BenchmarkRemapGC, alternating"
for round in 1 2 3; do
	if [ -n "$rev" ]; then
		(cd "$work/src" && go test ./heap/ -run '^$' -bench 'RemapGC$' -benchtime 100x -benchmem) | awk -v r="$round" '/^Benchmark/ {print "before round " r ": " $0}'
	fi
	go test ./heap/ -run '^$' -bench 'RemapGC$' -benchtime 100x -benchmem | awk -v r="$round" '/^Benchmark/ {print "after  round " r ": " $0}'
done
;; esac

# run BIN ARGS...: one line "wall s, user s, peak RSS MB" (or the timeout).
run() {
	local bin=$1
	shift
	if /usr/bin/time -f "%e %U %M" -o "$work/time" timeout "$timeout" "$work/$bin" "$@" >/dev/null 2>&1; then
		awk '{printf "%7.2f s wall %7.2f s user %6.0f MB", $1, $2, $3/1024}' "$work/time"
	else
		printf '> %d s (timed out or failed)' "$timeout"
	fi
}

case " $parts " in *" files "*)
echo "# clrspy heap on generated traces (gentrace, seed 1)"
for size in "${sizes[@]}"; do
	"$work/after" gentrace --size "$size" -o "$work/trace.nettrace" 2>"$work/gen"
	echo "## $size: $(cat "$work/gen")"
	for bin in "${bins[@]}"; do
		echo "$bin: $(run "$bin" heap "$work/trace.nettrace")"
	done
	rm -f "$work/trace.nettrace"
done
;; esac

case " $parts " in *" stream "*) ;; *) exit 0 ;; esac
echo "# RSS of clrspy heap - on an endless generated stream (every 10 s)"
for bin in "${bins[@]}"; do
	"$work/after" gentrace --size 1000GiB 2>/dev/null | "$work/$bin" heap - >/dev/null 2>&1 &
	pid=$! # the reader; the generator ends on the broken pipe
	line="$bin:"
	for ((s = 10; s <= stream_seconds; s += 10)); do
		sleep 10
		rss=$(awk '/VmRSS/ {print int($2/1024)}' "/proc/$pid/status" 2>/dev/null || echo "?")
		line="$line ${s}s ${rss} MB"
	done
	echo "$line"
	kill "$pid" 2>/dev/null || true
	wait 2>/dev/null || true
done
