#!/usr/bin/env bash
# Compares `clrspy stacks` with dotnet-stack (the oracle, not a test
# dependency) on the hang workload at a few thread counts: each tool's wall
# time, the threads it gave a managed stack, how many of dotnet-stack's
# stacks clrspy has frame for frame, and what each cost the target (the
# runtime's suspensions while it ran: clrspy measures its own; for
# dotnet-stack a `clrspy gc` session alongside counts them).
#
#   scripts/stacks-vs-dotnet-stack.sh [THREADS...]     (default: 50 500)
#
# dotnet-stack: dotnet tool install --tool-path /work/tools dotnet-stack --version 10.0.750501
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ds=${DOTNET_STACK:-/work/tools/dotnet-stack}
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
cd "$here"
go build -o "$work/clrspy" ./cmd/clrspy
make -s workload >/dev/null 2>&1 || true
wl=testdata/workloads/bin/net10.0/Workload
ms() { date +%s%N; }
printf '%-8s %-13s %8s %9s %8s %12s %12s\n' threads tool wall_ms sampled same paused_n paused_ms
for n in "${@:-50 500}"; do
  for n1 in $n; do
    m=$((n1 * 2 / 5)); h=$((n1 * 3 / 10)); s=$((n1 - m - h - 1))
    "$wl" hang monitor=$m handle=$h sleep=$s 2>"$work/err" &
    pid=$!
    until grep -qs '^hung' "$work/err"; do sleep 0.1; done
    t0=$(ms); "$work/clrspy" stacks --pid "$pid" --json -o "$work/c.json"; t1=$(ms)
    "$work/clrspy" gc --pid "$pid" --duration 30s --json --level none -o "$work/g.json" 2>/dev/null &
    gc=$!
    sleep 1
    t2=$(ms); "$ds" report -p "$pid" >"$work/d.txt"; t3=$(ms)
    sleep 0.5; kill -INT "$gc"; wait "$gc" || true
    python3 - "$work" "$n1" $(((t1 - t0) / 1000000)) $(((t3 - t2) / 1000000)) <<'PY'
import json, re, sys
work, n, cw, dw = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
c = json.load(open(work + "/c.json"))
frames = {t["os_tid"]: t["frames"] for t in c["threads"]}
ds = {}
cur = None
for line in open(work + "/d.txt"):
    m = re.match(r"\s*Thread \(0x([0-9A-Fa-f]+)\):", line)
    if m:
        cur = int(m.group(1), 16); ds[cur] = []
    elif cur is not None and line.strip() and "[Native Frames]" not in line:
        ds[cur].append(line.strip().split("!", 1)[-1])
same = sum(1 for t, f in ds.items() if frames.get(t) == f)
g = json.load(open(work + "/g.json"))
sus = [r for r in g["summary"]["suspensions_by_reason"] if r["reason"] == "SuspendOther"]
dn = sum(r["count"] for r in sus); dms = sum(r["total_ms"] for r in sus)
p = c["target_paused"]
print(f"{n:<8} {'clrspy':<13} {cw:8d} {c['sampled']:9d} {'-':>8} {p['count']:12d} {p['total_ms']:12.1f}")
print(f"{n:<8} {'dotnet-stack':<13} {dw:8d} {len(ds):9d} {same:8d} {dn:12d} {dms:12.1f}")
PY
    kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  done
done
