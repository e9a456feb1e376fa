#!/usr/bin/env bash
# soak.sh: every analysis command reading an endless stream for SOAK_SECONDS
# (300 by default), its memory sampled throughout; fails when any command's
# memory grows. The source is `clrspy gentrace` (GC sequences, samples with
# stacks on 64 threads, contention, allocations, all with fresh random
# stacks and types, i.e. what makes tables grow) piped into `clrspy CMD -`,
# all commands at once, each with its own generator seed.
#
# The check, per command: the peak RSS of the second half of the run is at
# most the peak of the first half (after a 30 s warm-up) plus 10 % and 8 MB
# (the Go heap's own breathing: GOGC lets the heap reach twice what is live
# before it collects, so an RSS sample lands anywhere in that band).
# A command whose state grows with the stream (samples, threads, stacks,
# objects) fails that within minutes; bounded state passes at any length.
# `gc` is the exception, by design: its report is every GC's row, so it
# holds one row per GC (the generated stream has ~50 GCs per MB, far more
# than a real process); its growth per GC is printed, not judged.
#
#   scripts/soak.sh                 # 5 minutes (make soak)
#   SOAK_SECONDS=60 scripts/soak.sh
# Prints a Markdown table for docs/PERFORMANCE.md.
set -u
secs=${SOAK_SECONDS:-300}
cmds=${SOAK_COMMANDS:-stat gc heap locks profile}
warm=30
if [ "$secs" -lt 60 ]; then
	warm=$((secs / 4))
fi
cd "$(dirname "$0")/.."
make -s build || exit 1
bin=$PWD/bin/clrspy
dir=$(mktemp -d /tmp/clrspy-soak.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$dir"' EXIT

declare -A pid gen
seed=1
for c in $cmds; do
	# A fifo, so the script knows both ends' pids.
	mkfifo "$dir/$c.fifo"
	"$bin" gentrace --size 10000GiB --seed "$seed" -o - >"$dir/$c.fifo" 2>/dev/null &
	gen[$c]=$!
	out=/dev/null
	case $c in profile) out=$dir/$c.pb.gz ;; esac
	if [ "$c" = profile ]; then
		"$bin" "$c" -o "$out" - <"$dir/$c.fifo" >"$dir/$c.out" 2>"$dir/$c.err" &
	else
		"$bin" "$c" - <"$dir/$c.fifo" >"$dir/$c.out" 2>"$dir/$c.err" &
	fi
	pid[$c]=$!
	seed=$((seed + 1))
done

rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$1/status" 2>/dev/null || echo 0; }
readmb() { awk '/^rchar/ {print int($2 / 1048576)}' "/proc/$1/io" 2>/dev/null || echo 0; }

declare -A first second at_warm
for c in $cmds; do first[$c]=0 second[$c]=0 at_warm[$c]=0; done
start=$(date +%s)
while :; do
	sleep 5
	now=$(($(date +%s) - start))
	[ "$now" -ge "$secs" ] && break
	for c in $cmds; do
		r=$(rss "${pid[$c]}")
		if [ "$now" -lt "$warm" ]; then
			continue
		elif [ "$now" -lt $(((secs + warm) / 2)) ]; then
			[ "$r" -gt "${first[$c]}" ] && first[$c]=$r
			[ "${at_warm[$c]}" -eq 0 ] && at_warm[$c]=$r
		else
			[ "$r" -gt "${second[$c]}" ] && second[$c]=$r
		fi
	done
done

declare -A mb
for c in $cmds; do
	mb[$c]=$(readmb "${pid[$c]}")
	kill "${gen[$c]}" 2>/dev/null # the stream ends mid-block: a cut trace
done
fail=0
echo "### Soak: an endless generated stream through every command, ${secs} s, all at once"
echo
echo "$(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | read | RSS after ${warm} s | peak RSS, first half | peak RSS, second half | exit | verdict |"
echo "|---|---|---|---|---|---|---|"
for c in $cmds; do
	wait "${pid[$c]}"
	code=$?
	verdict=flat
	limit=$((first[$c] + first[$c] / 10 + 8))
	if [ "$c" = gc ]; then
		gcs=$(grep -o '[0-9,]* GCs' "$dir/$c.out" | head -1 | tr -d ', GCs')
		if [ -n "$gcs" ] && [ "$gcs" -gt 0 ]; then
			verdict="rows of $gcs GCs: $(((second[$c] - at_warm[$c]) * 1048576 / gcs)) B per GC"
		else
			verdict="no GC count in the report"
			fail=1
		fi
	elif [ "${second[$c]}" -gt "$limit" ]; then
		verdict="GROWS (limit $limit MB)"
		fail=1
	fi
	# A cut stream is a complete report of what was read: exit 0, and the
	# report says it was cut.
	if [ "$code" -ne 0 ]; then
		verdict="$verdict; exit $code: $(head -c 200 "$dir/$c.err" | tr '\n' ' ')"
		fail=1
	elif ! grep -qi "truncat\|cut" "$dir/$c.out" "$dir/$c.err"; then
		verdict="$verdict; the report does not say the stream was cut"
		fail=1
	fi
	printf '| `clrspy %s -` | %d MB | %d MB | %d MB | %d MB | %d | %s |\n' "$c" "${mb[$c]}" "${at_warm[$c]}" "${first[$c]}" "${second[$c]}" "$code" "$verdict"
done
exit $fail
