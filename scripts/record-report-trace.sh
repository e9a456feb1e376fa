#!/usr/bin/env bash
# Re-records testdata/traces/mixed.nettrace, the report page's test trace:
# the workload's mixed mode (churn, cpu and contention at once, then an
# induced gen2 GC) recorded by clrspy from launch with GC, CPU, contention
# and allocation-sampling events. The workload's own exit line (its
# GC.CollectionCount, pauses, measurements) is saved as mixed.workload.json.
#
# A new recording has other counts: update the GC count in
# cmd/clrspy/report_browser_test.go (clrspy gc tells it) afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build workload
W=testdata/workloads/bin/net10.0/Workload
mkdir -p testdata/traces
bin/clrspy record --profile gc,cpu,contention,alloc -o testdata/traces/mixed.nettrace -- "$W" mixed seconds=1.5 \
	>testdata/traces/mixed.workload.json
bin/clrspy gc testdata/traces/mixed.nettrace | head -1
