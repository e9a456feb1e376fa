#!/usr/bin/env bash
# Times `clrspy stat` and `clrspy gc` against TraceEvent (PerfView's library,
# Microsoft.Diagnostics.Tracing.TraceEvent from NuGet) doing the same work on
# the same files: testdata/traceevent/TraceEventBench's `stat` (every event
# read and counted per provider/event) and `gc` (TraceEvent's GC analysis,
# the rows of PerfView's GCStats). Whole processes, as a user runs them:
# wall time, user+sys CPU and peak RSS from /usr/bin/time. The two sides run
# in alternating pairs (clrspy, TraceEvent, clrspy, ...) after one warm-up
# pair, so the ratios compare runs taken under the same machine load.
#
#   scripts/compare-traceevent.sh [ROUNDS] [GENSIZE] [FILE...]
#
# ROUNDS pairs per file and command (default 5). GENSIZE is the size of the
# generated trace (`clrspy gentrace --size`, default 128MiB; 0 for none).
# Without FILEs: every trace of the compatibility suite
# ($CLRSPY_COMPAT_TRACES or ../shared/traces) and of testdata/traces except
# the cut ones (TraceEvent stops early on those: not the same work), then the
# generated trace. Needs go, dotnet (the NuGet package restores on first
# build) and /usr/bin/time.
#
# Per file and command it prints, for each side, wall and user+sys CPU
# seconds as min/median/max and the peak RSS in MB (of the warm-up run:
# /usr/bin/time's own cost would blur the timed runs), then TraceEvent ÷
# clrspy: the median of the per-pair ratios of wall and CPU time, and of
# RSS. Above 1, clrspy is faster or smaller.
set -euo pipefail
rounds=${1:-5}
gensize=${2:-128MiB}
shift $(($# < 2 ? $# : 2))
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
make -s build traceevent >/dev/null
clrspy=$here/bin/clrspy
te=$here/testdata/traceevent/bin/TraceEventBench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

files=("$@")
if [ ${#files[@]} -eq 0 ]; then
	compat=${CLRSPY_COMPAT_TRACES:-$here/../shared/traces}
	for f in "$compat"/*.nettrace "$compat"/*.netperf testdata/traces/*.nettrace; do
		case $(basename "$f") in
		diagnostics__trace.nettrace | *.truncated.nettrace) continue ;;
		esac
		[ -f "$f" ] && files+=("$f")
	done
	if [ "$gensize" != 0 ]; then
		"$clrspy" gentrace --size "$gensize" -o "$work/generated-$gensize.nettrace" 2>/dev/null
		files+=("$work/generated-$gensize.nettrace")
	fi
fi

# run: the command's output goes nowhere; a failure stops the script
# (said on fd 3, the script's stderr: timed redirects 2).
exec 3>&2
run() {
	"$@" >/dev/null 2>"$work/err" || {
		echo "failed: $*" >&3
		cat "$work/err" >&3
		exit 1
	}
}

# timed OUT CMD...: appends "wall_s cpu_s" of one run of CMD to OUT, from
# bash's time (getrusage of the child alone, in ms; /usr/bin/time counts in
# 10 ms steps and adds its own 5-10 ms of CPU, both coarse against clrspy
# on the small files).
TIMEFORMAT='%3R %3U %3S'
timed() {
	local out=$1
	shift
	{ time run "$@"; } 2>"$work/bt"
	awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$work/bt" >>"$out"
}

# rss CMD...: peak RSS of one run of CMD in MB, from /usr/bin/time.
rss() {
	run /usr/bin/time -f '%M' -o "$work/t" "$@"
	awk '{printf "%.1f", $1 / 1024}' "$work/t"
}

# mmm COLUMN FILE [FORMAT]: min/median/max of a column.
mmm() {
	awk -v c="$1" '{print $c}' "$2" | sort -g | awk -v f="${3:-%.3f}" '{v[NR] = $1}
		END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf f "/" f "/" f, v[1], m, v[NR]}'
}

echo "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "TraceEvent $(grep -o 'TraceEvent" Version="[^"]*' testdata/traceevent/TraceEventBench/TraceEventBench.csproj | cut -d'"' -f3), $(dotnet --list-runtimes | grep -m1 NETCore.App | cut -d' ' -f1-2), $rounds pairs per row"
printf '%-72s %-4s | %-20s %-20s %6s | %-20s %-20s %6s | %s\n' file cmd \
	"clrspy wall s" "cpu s" "RSS MB" "TraceEvent wall s" "cpu s" "RSS MB" "TraceEvent÷clrspy: wall, cpu (medians of the pairs), RSS"
for f in "${files[@]}"; do
	for cmd in stat gc; do
		rm -f "$work/a" "$work/b"
		flags=()
		[ "$cmd" = gc ] && flags=(--level none)
		# The warm-up pair (files in the page cache) gives the peak RSS.
		ma=$(rss "$clrspy" "$cmd" "${flags[@]}" "$f")
		mb=$(rss "$te" "$cmd" "$f")
		for _ in $(seq "$rounds"); do
			timed "$work/a" "$clrspy" "$cmd" "${flags[@]}" "$f"
			timed "$work/b" "$te" "$cmd" "$f"
		done
		paste -d' ' "$work/b" "$work/a" | awk '{printf "%.3f %.3f\n", $1 / $3, $2 / $4}' >"$work/r"
		printf '%-72s %-4s | %-20s %-20s %6s | %-20s %-20s %6s | %s, %s, %.2f\n' \
			"$(basename "$f")" "$cmd" "$(mmm 1 "$work/a")" "$(mmm 2 "$work/a")" "$ma" \
			"$(mmm 1 "$work/b")" "$(mmm 2 "$work/b")" "$mb" \
			"$(mmm 1 "$work/r" %.2f | cut -d/ -f2)" "$(mmm 2 "$work/r" %.2f | cut -d/ -f2)" "$(awk -v a="$ma" -v b="$mb" 'BEGIN {print b / a}')"
	done
done
echo "load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
