#!/usr/bin/env bash
# reader-speed.sh: on generated traces (128 MiB and 1 GiB by default), in
# one run, the floor (read the file, touch every byte), the reader alone
# (every event through nettrace.Reader, no payload decoding: all events
# delivered, none (stat's filter), gc's filter), `clrspy stat` and
# `clrspy gc`, and TraceEvent's stat and gc when its program is built
# (make traceevent). Measures alternate within each round, so ratios come
# from the same minutes of a shared machine; the medians over the rounds
# are printed, then the ratios.
#
#   scripts/reader-speed.sh [SIZE...]      sizes as gentrace takes them (128MiB 1GiB)
#
# Environment: SPEED_DIR (traces, /tmp/clrspy-speed), SPEED_ROUNDS (3),
# SPEED_THREADS (the reader's decoders, 0: one per core, as the commands
# use), TRACEEVENT (the TraceEventBench program,
# testdata/traceevent/bin/TraceEventBench), SPEED_BASE (a git revision: its
# clrspy and its reader are timed too, alternating, for before/after).
#
# Every figure is wall time (and CPU, user+sys); throughput is bytes/wall.
# reader/floor is the floor's time over the reader's (1: the reader is as
# fast as reading the file); TE/clrspy is TraceEvent's time over clrspy's.
set -euo pipefail
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(128MiB 1GiB)
dir=${SPEED_DIR:-/tmp/clrspy-speed}
rounds=${SPEED_ROUNDS:-3}
threads=${SPEED_THREADS:-0}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
te=${TRACEEVENT:-$here/testdata/traceevent/bin/TraceEventBench}
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
nproc_=$(nproc)
[ "$threads" != 0 ] || threads=$nproc_

make -s build
go build -o "$work/readspeed" ./internal/readspeed
bins=(new)
declare -A clrspy=([new]=$here/bin/clrspy) readspeed=([new]=$work/readspeed)
if [ -n "${SPEED_BASE:-}" ]; then
	mkdir "$work/base"
	git archive "$SPEED_BASE" | tar -x -C "$work/base"
	mkdir -p "$work/base/internal/readspeed"
	cp internal/readspeed/main.go "$work/base/internal/readspeed/"
	(cd "$work/base" && go build -trimpath -o "$work/clrspy-base" ./cmd/clrspy && go build -o "$work/readspeed-base" ./internal/readspeed)
	bins=(base new)
	clrspy[base]=$work/clrspy-base
	readspeed[base]=$work/readspeed-base
fi
haveTE=0
[ -x "$te" ] && haveTE=1

# timed NAME CMD...: appends "wall cpu" to $work/NAME (the command's output
# goes nowhere; a failure stops the script).
timed() {
	local name=$1
	shift
	/usr/bin/time -f "%e %U %S" -o "$work/t" "$@" >/dev/null 2>"$work/err" || {
		# TraceEvent exits 1 with what it read on a cut file; these are whole.
		echo "failed: $*" >&2
		cat "$work/err" >&2
		exit 1
	}
	read -r w u s <"$work/t"
	echo "$w $(echo "$u + $s" | bc)" >>"$work/$name"
}

# med NAME COLUMN: the median of a column (1 wall, 2 CPU).
med() { sort -n -k"$2" "$work/$1" | awk -v c="$2" '{v[NR]=$c} END{print v[int((NR+1)/2)]}'; }
ratio() { echo "scale=3; $1 / $2" | bc; }

for size in "${sizes[@]}"; do
	trace=$dir/gen-$size.nettrace
	if [ ! -s "$trace" ]; then
		echo "generating $trace" >&2
		"${clrspy[new]}" gentrace --size "$size" -o "$trace.tmp" 2>/dev/null && mv "$trace.tmp" "$trace"
	fi
	bytes=$(stat -L -c %s "$trace")
	rm -f "$work"/m.*
	load0=$(cut -d' ' -f1-3 /proc/loadavg)
	for r in $(seq "$rounds"); do
		timed m.floor "${readspeed[new]}" floor "$trace"
		for b in "${bins[@]}"; do
			for k in all none gc; do
				timed "m.$b.reader-$k" "${readspeed[$b]}" reader -threads "$threads" -keep "$k" "$trace"
			done
			timed "m.$b.stat" "${clrspy[$b]}" stat "$trace"
			timed "m.$b.gc" "${clrspy[$b]}" gc "$trace"
		done
		if [ $haveTE = 1 ]; then
			timed m.te.stat "$te" stat "$trace"
			timed m.te.gc "$te" gc "$trace"
		fi
	done
	load1=$(cut -d' ' -f1-3 /proc/loadavg)
	echo
	echo "### $size generated trace ($bytes bytes), $rounds rounds, reader on $threads decoders"
	echo
	echo "load average $load0 before, $load1 after; $nproc_ cores"
	echo
	echo "| measure | wall (median) | CPU (median) | MB/s | floor ÷ it (wall) | TraceEvent ÷ it (wall, CPU) |"
	echo "|---|---|---|---|---|---|"
	fw=$(med m.floor 1)
	row() { # LABEL FILE [TE-FILE]
		local w c tew tec vs=""
		w=$(med "$2" 1)
		c=$(med "$2" 2)
		if [ -n "${3:-}" ] && [ -s "$work/$3" ]; then
			tew=$(med "$3" 1)
			tec=$(med "$3" 2)
			vs="$(ratio "$tew" "$w"), $(ratio "$tec" "$c")"
		fi
		echo "| $1 | $w s | $c s | $(echo "$bytes / $w / 1000000" | bc) | $(ratio "$fw" "$w") | $vs |"
	}
	row "floor (read + touch every byte)" m.floor
	for b in "${bins[@]}"; do
		row "$b: reader, every event" "m.$b.reader-all"
		row "$b: reader, every event rejected (stat's filter)" "m.$b.reader-none"
		row "$b: reader, gc's filter" "m.$b.reader-gc"
		row "$b: \`clrspy stat\`" "m.$b.stat" m.te.stat
		row "$b: \`clrspy gc\`" "m.$b.gc" m.te.gc
	done
	if [ $haveTE = 1 ]; then
		row "TraceEvent stat" m.te.stat
		row "TraceEvent gc" m.te.gc
	fi
done
