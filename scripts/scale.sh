#!/usr/bin/env bash
# scale.sh: every command on a generated trace (1 GiB by default): peak RSS,
# wall and CPU time; then `gc`, `profile` and `heap` with the reader on one thread
# against one per core (--threads 0), alternating runs. `make scale` runs it.
#
#   scripts/scale.sh [SIZE]            SIZE as gentrace takes it (1GiB)
#
# Environment: SCALE_DIR (where the trace and outputs go, /tmp/clrspy-scale),
# SCALE_COMMANDS (the commands of the first table, "stat gc gcjson profile
# heap locks report pipe"; gcjson is gc --json, pipe is gentrace | stat -), SCALE_THREADS ("gc profile heap": the
# commands compared; empty skips the comparison),
# SCALE_ROUNDS (alternating rounds of the threads comparison, 3),
# SCALE_BASE (an earlier clrspy binary: a last table times it against this
# build, alternating, both --threads 1, on SCALE_BASE_COMMANDS, "stat gc
# profile heap locks report"),
# SCALE_TIMEOUT (seconds a command may run, 900), SCALE_MAX_RSS_MB (a
# command above it is killed, 8192: a command that grows with the trace
# must not take the machine down). Prints Markdown tables for
# docs/PERFORMANCE.md; the machine's load average goes with each table.
set -u
size=${1:-1GiB}
dir=${SCALE_DIR:-/tmp/clrspy-scale}
rounds=${SCALE_ROUNDS:-3}
limit=${SCALE_TIMEOUT:-900}
maxrss=${SCALE_MAX_RSS_MB:-8192}
cd "$(dirname "$0")/.."
mkdir -p "$dir"
make -s build || exit 1
bin=$PWD/bin/clrspy
trace=$dir/scale-$size.nettrace
if [ ! -s "$trace" ]; then
	echo "generating $trace" >&2
	"$bin" gentrace --size "$size" -o "$trace.tmp" && mv "$trace.tmp" "$trace" || exit 1
fi
bytes=$(stat -c %s "$trace")

# run LABEL CMD...: runs CMD under /usr/bin/time with a time limit and an
# RSS watchdog; sets wall, cpu, rss (KB), status.
run() {
	local label=$1
	shift
	local tf=$dir/time.$$
	/usr/bin/time -f "%e %U %S %M %x" -o "$tf" timeout "$limit" "$@" >"$dir/out.$label" 2>"$dir/err.$label" &
	local tpid=$!
	local killed=""
	while kill -0 "$tpid" 2>/dev/null; do
		sleep 1
		# the command is the grandchild (time → timeout → clrspy)
		for p in $(pgrep -P "$(pgrep -P "$tpid" | head -1)" 2>/dev/null); do
			r=$(awk '/VmRSS/{print $2}' "/proc/$p/status" 2>/dev/null)
			if [ -n "$r" ] && [ "$r" -gt $((maxrss * 1024)) ]; then
				kill -9 "$p" 2>/dev/null
				killed="killed above ${maxrss} MB"
			fi
		done
	done
	wait "$tpid"
	# (time puts "Command exited with non-zero status N" first then)
	read -r wall user sys rss code < <(tail -n 1 "$tf")
	cpu=$(echo "$user + $sys" | bc)
	status="exit $code"
	if [ -n "$killed" ]; then
		status=$killed
	elif [ "$code" = 124 ]; then
		status="timed out after ${limit} s"
	fi
	rm -f "$tf"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

echo
echo "### Every command on a generated $size trace ($bytes bytes)"
echo
echo "load average before: $(load); $(nproc) cores"
echo
echo "| command | peak RSS | wall | CPU (user+sys) | result |"
echo "|---|---|---|---|---|"
declare -A cmds=(
	[stat]="stat $trace"
	[gc]="gc $trace -o /dev/null"
	[profile]="profile $trace -o $dir/profile.pb.gz"
	[heap]="heap $trace"
	[locks]="locks $trace"
	[report]="report $trace -o $dir/report.html"
	[gcjson]="gc $trace --json -o $dir/gc.json"
)
for c in ${SCALE_COMMANDS:-stat gc gcjson profile heap locks report pipe}; do
	if [ "$c" = pipe ]; then
		run pipe bash -c "'$bin' gentrace --size '$size' 2>/dev/null | '$bin' stat -"
		printf '| `clrspy gentrace | clrspy stat -` (both processes) | %d MB | %.1f s | %.1f s | %s |\n' $((rss / 1024)) "$wall" "$cpu" "$status"
		continue
	fi
	# shellcheck disable=SC2086
	run "$c" "$bin" ${cmds[$c]}
	label=$c
	[ "$c" = gcjson ] && label="gc --json"
	printf '| `clrspy %s` | %d MB | %.1f s | %.1f s | %s |\n' "$label" $((rss / 1024)) "$wall" "$cpu" "$status"
done
echo
echo "load average after: $(load)"
threads=${SCALE_THREADS-gc profile heap}

threads_table() {
echo
echo "### Reader threads: one goroutine against one per core, alternating"
echo
echo "load average before: $(load)"
echo
if "$bin" gc --help 2>&1 | grep -q -- '--threads'; then
	echo "| round | command | --threads 1 wall | --threads 0 (one per core) wall | ratio | --threads 1 CPU | --threads 0 CPU |"
	echo "|---|---|---|---|---|---|---|"
	for ((i = 1; i <= rounds; i++)); do
		for c in $threads; do
			# shellcheck disable=SC2086
			run "$c.1" "$bin" ${cmds[$c]} --threads 1
			w1=$wall c1=$cpu
			# shellcheck disable=SC2086
			run "$c.n" "$bin" ${cmds[$c]} --threads 0
			printf '| %d | `%s` | %.1f s | %.1f s | %.2f | %.1f s | %.1f s |\n' "$i" "$c" "$w1" "$wall" "$(echo "$wall / $w1" | bc -l)" "$c1" "$cpu"
		done
	done
else
	# No --threads flag yet: the same work (reader, analysis, result) as
	# a benchmark with the Reader option, threads=1 then threads=2 in each
	# round.
	echo "(\`clrspy\` has no --threads yet: BenchmarkScaleGC/Profile in nettrace, the commands' reader and analysis)"
	echo
	echo "| work | threads=1 wall | threads=2 wall | ratio |"
	echo "|---|---|---|---|"
	re=$(echo "$threads" | sed 's/gc/GC/; s/profile/Profile/; s/ /|/g')
	CLRSPY_SCALE_TRACE=$trace go test ./nettrace -run '^$' -bench "Scale($re)\$" -benchtime 1x -count "$rounds" -timeout 0 |
		awk '/^BenchmarkScale/ {
			split($1, a, "/"); name = a[1]; sub("Benchmark", "", name); th = a[2]; sub("-[0-9]+$", "", th)
			s = $3 / 1e9
			if (th == "threads=1") { one[name] = s } else { r = s / one[name]; printf "| %s | %.2f s | %.2f s | %.2f |\n", name, one[name], s, r }
		}'
fi
echo
echo "load average after: $(load)"
}
[ -z "$threads" ] || threads_table

# SCALE_BASE=BINARY: that (earlier) build against this one, alternating,
# both on one decoder, so that a change's gain is measured in one run.
base=${SCALE_BASE:-}
[ -n "$base" ] || exit 0
echo
echo "### $(basename "$base") against this build, alternating, --threads 1"
echo
echo "load average before: $(load)"
echo
echo "| round | command | base wall | this wall | ratio | base RSS | this RSS |"
echo "|---|---|---|---|---|---|---|"
for ((i = 1; i <= rounds; i++)); do
	for c in ${SCALE_BASE_COMMANDS:-stat gc profile heap locks report}; do
		# shellcheck disable=SC2086
		run "$c.base" "$base" ${cmds[$c]} --threads 1
		w0=$wall r0=$rss
		# shellcheck disable=SC2086
		run "$c.this" "$bin" ${cmds[$c]} --threads 1
		printf '| %d | `%s` | %.1f s | %.1f s | %.2f | %d MB | %d MB |\n' "$i" "$c" "$w0" "$wall" "$(echo "$wall / $w0" | bc -l)" $((r0 / 1024)) $((rss / 1024))
	done
done
echo
echo "load average after: $(load)"
