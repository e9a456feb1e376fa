#!/usr/bin/env bash
# The heap-snapshot figures for docs/PERFORMANCE.md ("Heap snapshots"):
# clrspy snapshot against dotnet-gcdump on the same process, one run each,
# for graph workloads of growing size:
#   - wall time and peak RSS (/usr/bin/time) of dotnet-gcdump collect, of
#     clrspy snapshot --pid (take + graph + dominators + report) and of the
#     same with --max-memory (arrays spilled to temporary files);
#   - the target's pause: clrspy's own report of the induced GC, and for
#     dotnet-gcdump a parallel `clrspy gc --pid` session's pause of the
#     induced gen2 GC it causes;
#   - objects: the workload's known count (2 per item), clrspy's, and the
#     nodes of dotnet-gcdump's file (`dotnet-gcdump report`), with clrspy's
#     events_lost / complete.
#
#   scripts/snapshot-scale.sh [ITEMS...]
#
# ITEMS (GraphItem+GraphLeaf pairs) default to 500000 4500000 (1 M and 9 M
# objects). Environment: GCDUMP (default /tmp/gcdumptool/dotnet-gcdump;
# install: dotnet tool install --tool-path /tmp/gcdumptool dotnet-gcdump
# --version 10.0.750501), MAXMEM (the --max-memory run's budget; default:
# 80% of a quarter of dotnet-gcdump's peak RSS in the same run, the goal),
# CLRSPY_PHASES (set: clrspy's time, RSS and Go heap at each phase).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
items=("$@")
[ ${#items[@]} -gt 0 ] || items=(500000 4500000)
gcdump=${GCDUMP:-/tmp/gcdumptool/dotnet-gcdump}
maxmem=${MAXMEM:-}
work=$(mktemp -d)
wl=
cleanup() {
	[ -n "$wl" ] && kill "$wl" 2>/dev/null || true
	exec 3>&- 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
export DOTNET_ROOT=${DOTNET_ROOT:-$(dirname "$(readlink -f "$(command -v dotnet)")")}

cd "$here"
CGO_ENABLED=0 go build -trimpath -o "$work/clrspy" ./cmd/clrspy
(cd testdata/workloads/Workload && dotnet build -c Release -o ../bin/net10.0 --artifacts-path ../obj/net10.0 >/dev/null)
exe=testdata/workloads/bin/net10.0/Workload

timed() { # timed NAME CMD...: runs CMD under /usr/bin/time into $work/NAME.*
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$work/$name.time" "$@" >"$work/$name.out" 2>"$work/$name.err" || echo "($name failed: $(tail -1 "$work/$name.err"))"
	awk -v n="$name" '{printf "%-22s %8.2f s %8.1f MB\n", n, $1, $2/1024}' "$work/$name.time"
	# With CLRSPY_PHASES set, clrspy's phases (time, RSS, peak, Go heap).
	[ -z "${CLRSPY_PHASES:-}" ] || grep "clrspy: phase" "$work/$name.err" || true
}

for n in "${items[@]}"; do
	mkfifo "$work/in"
	"$exe" graph items="$n" <"$work/in" >/dev/null 2>"$work/wl.err" &
	wl=$!
	exec 3>"$work/in" # held open: the workload waits on stdin
	until grep -q "graph ready" "$work/wl.err"; do sleep 1; done
	echo "## graph items=$n: $((2 * n)) known objects (+ the runtime's own), pid $wl"

	# dotnet-gcdump, with a parallel clrspy gc session for the pause.
	"$work/clrspy" gc --pid "$wl" --json -o "$work/gc.json" 2>/dev/null &
	gcs=$!
	sleep 2
	timed dotnet-gcdump "$gcdump" collect -p "$wl" -o "$work/d.gcdump"
	sleep 1
	kill -INT "$gcs"
	wait "$gcs" || true
	python3 - "$work/gc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = [g["pause_ms"] for g in d["gcs"] if g["generation"] == 2 and g["induced"]]
print("dotnet-gcdump's induced gen2 pause (clrspy gc): %s ms" % (", ".join("%.1f" % x for x in p) or "none seen"))
PY
	grep -i "warn" "$work/dotnet-gcdump.out" | head -1 || true
	"$gcdump" report "$work/d.gcdump" >"$work/report.txt" 2>&1 || true
	python3 - "$work/report.txt" <<'PY'
import re, sys
nodes = 0
for line in open(sys.argv[1]):
    m = re.match(r"\s*([\d,]+)\s+([\d,]+)\s+(\S.*)$", line)
    if m:
        nodes += int(m.group(2).replace(",", ""))
print("dotnet-gcdump's file: %d objects (its report's counts)" % nodes)
PY
	rm -f "$work/d.gcdump"

	timed clrspy "$work/clrspy" snapshot --pid "$wl" --json
	budget=${maxmem:-$(awk '{printf "%dMiB", $2/1024/4*0.8}' "$work/dotnet-gcdump.time")}
	echo "clrspy-max-memory: --max-memory $budget"
	timed clrspy-max-memory "$work/clrspy" snapshot --max-memory "$budget" --pid "$wl" --json
	for r in clrspy clrspy-max-memory; do
		python3 - "$work/$r.out" "$r" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["missing"]
print("%-22s objects %d, pause %.1f ms, events_lost %d, complete %s, missing nodes/edges events %d/%d" % (
    sys.argv[2], d["objects"], d["pause_ms"] or 0, d["events_lost"], d["complete"], m["node_events"], m["edge_events"]))
PY
	done
	echo exit >&3
	exec 3>&-
	wait "$wl" || true
	wl=
	rm -f "$work/in"
done
