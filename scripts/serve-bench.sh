#!/usr/bin/env bash
# The figures of clrspy serve in docs/PERFORMANCE.md:
#   1. serve's own CPU (share of one core) and RSS while it monitors 1, 10
#      and 50 processes, idle and GC-busy, with a /metrics scrape every 5 s
#      (BenchmarkServeCost, the serve binary measured through /proc);
#   2. the overhead on the monitored program: a throughput workload
#      alternating unmonitored and monitored phases in one process, median
#      of the pairs' ratios, beside the same method with nothing attached
#      (BenchmarkTargetOverhead).
# The machine's load average is printed with every figure: on a shared
# machine the figures move with it.
#
#   scripts/serve-bench.sh              # everything (about 20 minutes)
#   SERVE_BENCH_WINDOW=60s SERVE_OVERHEAD_PAIRS=9 scripts/serve-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. ../shared/bin/go-env.sh
echo "# $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## serve's own cost (window ${SERVE_BENCH_WINDOW:-30s})"
go test ./cmd/clrspy -run '^$' -bench 'ServeCost' -benchtime 1x -timeout 60m | grep -E '^Benchmark'
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "## overhead on the target (${SERVE_OVERHEAD_PAIRS:-7} pairs of ${SERVE_OVERHEAD_PHASE:-3s} phases)"
go test ./serve -run '^$' -bench 'TargetOverhead' -benchtime 1x -timeout 60m | grep -E '^Benchmark'
echo "# load $(cut -d' ' -f1-3 /proc/loadavg)"
