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
#      buffers;
#   5. the perf sampler's cost as the target's CPU time per unit of work
#      (BenchmarkSamplerCPUCost: 2-thread throughput workload, 99 Hz, 200
#      on/off pairs of 100 ms per process, 3 processes): the median
#      overhead with its bootstrap 95 % interval;
#   6. off-CPU time (BenchmarkOffCPUOverhead: pingpong, three samplers on
#      one process enabled in turn with off slices between, 40 cycles per
#      process, 4 processes): every switch-out with callchains and copy
#      (before), lean (now), the CPU sampler alone; ratios, each over the
#      CPU sampler alone in the same cycle, context switches/s;
#   7. what each part of a switch-out's sample costs (same method, one
#      process, 60 cycles): the switch records alone, samples without
#      copy or callchains, with the copy, with the kernel or the user
#      callchain alone, all of them;
#   8. busy threads' switch-outs sampled one in 7 (same method, 30 cycles,
#      4 processes): every switch-out sampled by the lean events
#      (lean-every, before), one in 7 for busy threads (lean, now), the
#      CPU sampler alone.
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
CLRSPY_CPUCOST_PAIRS=200 go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'SamplerCPUCost' -benchtime 3x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|process [0-9]|all:'
CLRSPY_OFFCPU_CYCLES=40 go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'OffCPUOverhead' -benchtime 4x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|process [0-9]|ratio median|over cpu-only'
CLRSPY_OFFCPU_CYCLES=60 CLRSPY_OFFCPU_CONFIGS=cpu-only,records-only,no-chains,copy-no-chains,no-user-chain,no-kernel-chain,every-stack \
	go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'OffCPUOverhead' -benchtime 1x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|ratio median|over cpu-only'
CLRSPY_OFFCPU_CYCLES=30 CLRSPY_OFFCPU_CONFIGS=lean-every,lean,cpu-only go test ./perf -run '^$' -count 1 -timeout 60m -v \
	-bench 'OffCPUOverhead' -benchtime 4x 2>&1 | grep --line-buffered -E '^(Benchmark|ok|FAIL)|process [0-9]|ratio median|over cpu-only'
echo "# done $(date -u +%FT%TZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
