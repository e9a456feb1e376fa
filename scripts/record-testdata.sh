#!/usr/bin/env bash
# Re-records the test fixtures in testdata/traces with clrspy itself, from
# the project's own workload (testdata/workloads). Each trace is a launch-mode
# recording, so it covers the program's whole run, and the workload's exit
# line (what the runtime reports about itself: GC.CollectionCount, pauses,
# GCMemoryInfo, the mode's own measurements) is saved beside it as
# NAME.workload.json.
#
#   scripts/record-testdata.sh [NAME...]     (default: every trace)
#
# A new recording has other counts, timestamps and addresses: run the
# library tests afterwards, check what changed, then update the facts in
# testdata/traces/README.md and the goldens (go test ./... -update on the
# packages whose goldens differ).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v go >/dev/null && command -v dotnet >/dev/null || { echo "$0: needs go and dotnet on PATH" >&2; exit 1; }
make -s build workload
clrspy=bin/clrspy
W=testdata/workloads/bin/net10.0/Workload
D=testdata/traces
mkdir -p "$D"

# rec NAME PROFILES [VAR=VALUE...] -- MODE OPTIONS...
rec() {
	local name=$1 profile=$2
	shift 2
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	echo "recording $name: --profile $profile ${envs[*]} $*" >&2
	env "${envs[@]}" "$clrspy" record --profile "$profile" -o "$D/$name.nettrace" -- "$W" "$@" >"$D/$name.workload.json"
}

# cut SRC DST BYTES: the first BYTES of SRC, which must end inside an event
# block (the reader then reports a TruncatedError naming the EventBlock).
cut() {
	head -c "$3" "$D/$1" >"$D/$2"
	if ! "$clrspy" stat "$D/$2" 2>&1 >/dev/null | grep -q 'EventBlock'; then
		echo "$2: the cut at $3 bytes is not inside an event block; pick another offset" >&2
		exit 1
	fi
}

all=(gc-wks gc-server gc-induced heap-alloc heap-churn cpu recursion contention composite gc-wks.truncated exceptions threadpool)
want=("$@")
[ ${#want[@]} -eq 0 ] && want=("${all[@]}")
for n in "${want[@]}"; do
	case $n in
	# Workstation concurrent GC: gen0, gen1 and gen2 GCs, blocking,
	# background and (with this large a window) foreground ones.
	# Whether a gen0 GC lands inside a background GC is up to timing:
	# record until one does (usually the first or second try).
	gc-wks)
		for try in 1 2 3 4 5 6 7 8; do
			rec gc-wks gc -- churn iterations=2000 window=1000000
			"$clrspy" gc "$D/gc-wks.nettrace" 2>/dev/null | grep -q '^by type:.* Foreground' && break
			[ "$try" = 8 ] && { echo "gc-wks: no foreground GC in 8 recordings" >&2; exit 1; }
		done
		;;
	# Server GC on two heaps.
	gc-server) rec gc-server gc DOTNET_gcServer=1 DOTNET_GCHeapCount=2 -- churn iterations=8000 ;;
	# Induced blocking GCs of each generation, with allocation ticks and
	# the surviving and moved object ranges (compacting and sweeping GCs).
	gc-induced) rec gc-induced gc-verbose,movement -- induced gen0=3 gen1=3 gen2=3 ;;
	# Sampled allocations with type names and stacks, and movement.
	heap-alloc) rec heap-alloc alloc,movement -- churn iterations=600 window=100 ;;
	# The heap reservoir's test trace: five times heap-alloc's samples and
	# a few hundred alive at once. Gzipped (9.5 MB raw), which also keeps
	# it out of the tests that read every *.nettrace fixture.
	# Exceptions of four types from named methods, with their stacks
	# (exceptions' fixture test). Gzipped, out of the every-fixture tests.
	exceptions)
		"$clrspy" record --providers Microsoft-Windows-DotNETRuntime:0x8038:4 -o "$D/exceptions.nettrace" -- "$W" throws threads=2 count=40 >"$D/exceptions.workload.json"
		gzip -9f "$D/exceptions.nettrace"
		;;
	heap-churn)
		rec heap-churn alloc,movement -- churn iterations=3000 window=200000
		gzip -9f "$D/heap-churn.nettrace"
		;;
	# Managed stack samples: HotA and HotB in a 3:1 work ratio.
	cpu) rec cpu cpu -- cpu seconds=1 ;;
	# Stacks deeper than the runtime's 100-frame walk limit.
	recursion) rec recursion cpu -- recursion depth=300 seconds=0.5 ;;
	# .NET 10 contention events (lock ids, owner thread ids) and samples of
	# threads blocked in native code.
	contention) rec contention contention,cpu -- contention threads=4 iterations=5 holdMs=10 ;;
	# Everything at once (churn, cpu and contention on their own threads,
	# then an induced gen2 GC): the report page's test trace.
	composite) rec composite gc,cpu,contention,alloc -- composite seconds=1.5 ;;
	# Thread-pool starvation (sync-over-async) with its wait-handle waits;
	# gzipped, out of the tests that read every *.nettrace fixture.
	threadpool)
		rec threadpool threadpool -- starve items=16 blockMs=200 settleMs=200 tailMs=300
		gzip -9f "$D/threadpool.nettrace"
		;;
	# A copy of gc-wks cut in the middle of an event block, among its GCs.
	gc-wks.truncated) cut gc-wks.nettrace gc-wks.truncated.nettrace 30000 ;;
	*)
		echo "unknown trace $n (traces: ${all[*]})" >&2
		exit 2
		;;
	esac
done
ls -l "$D"
