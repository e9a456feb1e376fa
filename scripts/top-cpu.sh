#!/usr/bin/env bash
# CPU of `clrspy top` itself on a busy target, for docs/PERFORMANCE.md.
#
#   scripts/top-cpu.sh [SECONDS]        (default 60; needs go, dotnet, tmux)
#
# The workload's churn mode GCs every few milliseconds. `clrspy top --pid`
# watches it in a detached 160x48 tmux terminal while `clrspy gc --pid`
# reads the same events in the same run (the decoding alone, no screen):
# the CPU time of both over SECONDS comes from /proc/PID/stat, the GC rate
# from the workload's own report, the load from /proc/loadavg.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
warm=5
make -s build workload >/dev/null
W=testdata/workloads/bin/net10.0/Workload
tmp=$(mktemp -d)
sock=clrspy-top-cpu-$$
cleanup() {
	tmux -L "$sock" kill-server 2>/dev/null || true
	[ -n "${gcpid:-}" ] && kill "$gcpid" 2>/dev/null || true
	[ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

"$W" churn seconds=$((secs + warm + 15)) >"$tmp/workload.json" 2>"$tmp/workload.err" &
wpid=$!
until grep -q '^ready' "$tmp/workload.err" 2>/dev/null; do sleep 0.1; done

tmux -L "$sock" -f /dev/null new-session -d -s top -x 160 -y 48 "exec bin/clrspy top --pid $wpid"
toppid=$(tmux -L "$sock" display -p -t top '#{pane_pid}')
bin/clrspy gc --pid "$wpid" --level none >/dev/null 2>"$tmp/gc.err" &
gcpid=$!

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
sleep "$warm"
hz=$(getconf CLK_TCK)
t0=$(ticks "$toppid"); g0=$(ticks "$gcpid"); w0=$(ticks "$wpid"); load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
sleep "$secs"
t1=$(ticks "$toppid"); g1=$(ticks "$gcpid"); w1=$(ticks "$wpid"); load1=$(cut -d' ' -f1-3 /proc/loadavg)
end=$(date +%s.%N)
screen=$(tmux -L "$sock" capture-pane -p -t top | sed -n 3p)
tmux -L "$sock" send-keys -t top q
kill -INT "$gcpid"; wait "$gcpid" || true; gcpid=
wait "$wpid" || true; wpid=

awk -v t="$((t1 - t0))" -v g="$((g1 - g0))" -v w="$((w1 - w0))" -v hz="$hz" -v s0="$start" -v s1="$end" \
	-v l0="$load0" -v l1="$load1" -v screen="$screen" '
BEGIN {
	d = s1 - s0
	printf "over %.1f s (load average %s at the start, %s at the end):\n", d, l0, l1
	printf "  clrspy top    %6.2f s CPU  %5.2f %% of one core\n", t / hz, t / hz / d * 100
	printf "  clrspy gc     %6.2f s CPU  %5.2f %% of one core (same events, no screen)\n", g / hz, g / hz / d * 100
	printf "  workload      %6.2f s CPU  %5.2f %% of one core\n", w / hz, w / hz / d * 100
	printf "  top / gc      %6.2f\n", (g > 0 ? t / g : 0)
	printf "  screen: %s\n", screen
}'
grep -o '"gen0":[0-9]*\|"elapsedMs":[0-9.]*' "$tmp/workload.json" | tr '\n' ' ' |
	awk -F'[: ]' '{ printf "  workload: %d GCs in %.1f s, a GC every %.1f ms\n", $2, $4 / 1000, $4 / $2 }'
