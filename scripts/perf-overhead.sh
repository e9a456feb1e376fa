#!/usr/bin/env bash
# The perf_event sampler's figures for docs/PERFORMANCE.md, measured on this
# machine in one go:
#
#   1. overhead on a 4-thread throughput workload (testdata/workloads mode
#      `throughput`): PAIRS processes, each with the perf sampler (99 Hz)
#      attached for 10 s and switched on and off every 250 ms, then 2 s
#      unattached / 2 s EventPipe sampler (what `clrspy profile --pid`
#      runs) / 2 s unattached; ratios of throughput (1.00 = free), median
#      of the pairs, with clrspy's own CPU while sampling;
#   2. the perf sampler alone at 999 and 4999 Hz (same on/off method),
#      where its cost stands out of a shared machine's noise: the cost per
#      sample, and what it implies at 99 Hz;
#   3. clrspy's CPU per 1,000 samples for unwinding and naming alone
#      (3,000 recorded samples replayed, thread CPU time);
#   4. samples lost at 999 Hz on 16 busy threads with the default ring
#      buffers.
#
#   scripts/perf-overhead.sh [PAIRS]     (default 7; needs root or CAP_PERFMON)
#
# The machine may be shared: the load average is printed before and after
# and per pair; quote it with the figures.
set -euo pipefail
pairs=${1:-7}
cd "$(dirname "$0")/.."
if [ -f ../shared/bin/go-env.sh ]; then . ../shared/bin/go-env.sh; fi
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'SamplerOverhead' -benchtime "${pairs}x" 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|pair [0-9]'
go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'PerfOverheadAt' -benchtime 5x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|run [0-9]'
go test ./perf -run '^$' -count 1 -timeout 20m \
	-bench 'Builder' -benchtime 20x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)'
go test ./perf -run '^$' -count 1 -timeout 20m -v \
	-bench 'Lost' -benchtime 3x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|run [0-9]'
echo "# done $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
