#!/usr/bin/env bash
# What `clrspy memory --native` costs the target, measured on this machine
# in one go, beside heaptrack on the same workload:
#
#   the workload mode `nativechurn` calls Marshal.AllocHGlobal and
#   FreeHGlobal (libc's malloc and free through libSystem.Native, where
#   heaptrack's preload sees them too; VIA=libc: P/Invokes of libc's,
#   which heaptrack does not see), 64 bytes freed at once, at RATE calls a
#   second on one thread
#   and prints, every second, the calls made and the CPU time it used. For
#   each RATE (10k, 100k, 1M a second by default):
#     off        the workload alone (seconds 2-6 of 8);
#     native     the workload with `clrspy memory --native --duration 6s
#                --runtime=false` attached from its third second: the
#                seconds whose end falls 2 to 6 s after clrspy started
#                (the probes are on from about 0.5 s after it starts
#                until 6 s later);
#     heaptrack  the workload started under heaptrack (seconds 2-6).
#   Printed: calls/s reached (a rate the target cannot hold with the
#   probes on shows as less) and the target's CPU in ms a second; the
#   cost per call is the CPU difference over the calls; with clrspy's own
#   CPU (user+sys, /usr/bin/time) over its whole run, teardown included.
#
#   [VIA=libc] scripts/native-overhead.sh [RATES...]    (needs root or CAP_PERFMON; heaptrack for its column)
#
# The machine may be shared: the load average is printed before and after;
# quote it with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -f ../shared/bin/go-env.sh ]; then . ../shared/bin/go-env.sh; fi
via=${VIA:-hglobal}
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(10000 100000 1000000)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/clrspy" ./cmd/clrspy
(cd testdata/workloads/Workload && dotnet build -c Release -o ../bin/net10.0 --artifacts-path ../obj/net10.0 -nologo -v quiet >/dev/null)
exe=$PWD/testdata/workloads/bin/net10.0/Workload
echo "# via $via; $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"

# ticks FILE [FROM_MS TO_MS]: mean calls/s and CPU ms/s of the tick lines
# (the 2nd to 6th second, or those ending between FROM_MS and TO_MS).
ticks() {
	awk -v from="${2:-}" -v to="${3:-}" '
		/^tick / {
			n++; t = $2; sub("calls=", "", $3); sub("cpuMs=", "", $4)
			if (from == "" ? (n >= 2 && n <= 6) : (t >= from && t <= to)) { c += $3; u += $4; k++ }
		}
		END { if (k) printf "%9.0f %7.1f", c / k, u / k; else printf "%9s %7s", "-", "-" }' "$1"
}

printf "%9s | %9s %7s | %9s %7s %6s %9s | %9s %7s\n" rate off/s cpu_ms native/s cpu_ms us/call clrspy_cpu heaptrack cpu_ms
for rate in "${rates[@]}"; do
	"$exe" nativechurn via="$via" rate="$rate" seconds=8 2>"$tmp/off" >/dev/null
	off=$(ticks "$tmp/off")

	"$exe" nativechurn via="$via" rate="$rate" seconds=16 2>"$tmp/on" >/dev/null &
	wpid=$!
	sleep 3
	start=$(date +%s%3N)
	/usr/bin/time -f "%U %S" -o "$tmp/time" "$tmp/clrspy" memory --pid "$wpid" --native --duration 6s --runtime=false >"$tmp/native.txt" 2>"$tmp/native.err" || true
	wait "$wpid" || true
	on=$(ticks "$tmp/on" $((start + 2000)) $((start + 6000)))
	ccpu=$(awk '{printf "%.2fs", $1 + $2}' "$tmp/time")

	ht="        -       -"
	if command -v heaptrack >/dev/null; then
		(cd "$tmp" && heaptrack -o "$tmp/ht" "$exe" nativechurn via="$via" rate="$rate" seconds=8 2>"$tmp/ht.err" >/dev/null) || true
		ht=$(ticks "$tmp/ht.err")
		rm -f "$tmp"/ht.*
	fi
	# The cost of a malloc/free pair: the extra CPU over the calls made.
	us=$(echo "$off $on" | awk '{ if ($3 > 0) printf "%.1f", ($4 - $2) * 1000 / $3; else print "-" }')
	printf "%9s | %s | %s %6s %9s | %s\n" "$rate" "$off" "$on" "$us" "$ccpu" "$ht"
	grep -h "lost" "$tmp/native.err" | sed 's/^/#   /' || true
done
echo "# done $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
