#!/usr/bin/env bash
# Runs every fuzz target of the module (every `func FuzzXxx` in a _test.go
# file), one after the other, each for a number of executions rather than a
# duration: with Go 1.26 a duration-bounded run can fail at its deadline
# with "context deadline exceeded" and no input (golang/go#75804).
#
#   FUZZEXECS  executions per round (default 200000)
#   FUZZMIN    minimum seconds per target: rounds of FUZZEXECS repeat until
#              the target has run that long (default 0: one round)
#   FUZZ       regexp of target names to run (default: all)
#   FUZZPARALLEL  fuzzing workers per target (default: one per CPU)
#   FUZZLOG    directory for each round's full output (default: a temp dir)
#
# Prints one line per target (package, executions, time, rounds, result)
# and exits non-zero when any target failed; a failing input is left in
# the package's testdata/fuzz/FuzzXxx/ by go test, as usual.
set -u
cd "$(dirname "$0")/.."
GO=${GO:-go}
execs=${FUZZEXECS:-200000}
minsec=${FUZZMIN:-0}
filter=${FUZZ:-.}
parallel=${FUZZPARALLEL:+-parallel $FUZZPARALLEL}
logdir=${FUZZLOG:-$(mktemp -d /tmp/clrspy-fuzz.XXXXXX)}
mkdir -p "$logdir"

targets=$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' . |
	sed -E 's|^\./(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort | grep -E " ($filter)" || true)
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz target matches $filter" >&2
	exit 1
fi
echo "fuzz.sh: $(echo "$targets" | wc -l) targets, $execs executions per round, at least ${minsec}s each; logs in $logdir"
failed=0
while read -r pkg name; do
	total=0 rounds=0 status=ok
	start=$(date +%s)
	while :; do
		rounds=$((rounds + 1))
		log="$logdir/$name-$(echo "$pkg" | tr / _)-$rounds.log"
		$GO test "./$pkg" -run '^$' -fuzz "^$name\$" -fuzztime "${execs}x" -fuzzminimizetime 500x $parallel >"$log" 2>&1
		rc=$?
		n=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
		total=$((total + ${n:-0}))
		if [ $rc -ne 0 ]; then
			status="FAILED (see $log)"
			failed=1
			break
		fi
		[ $(($(date +%s) - start)) -ge "$minsec" ] && break
	done
	elapsed=$(($(date +%s) - start))
	corpus=$(ls "$($GO env GOCACHE)/fuzz/github.com/clrspy/clrspy/$pkg/$name" 2>/dev/null | wc -l)
	printf '%-12s %-22s %12d execs %6ds %3d rounds  cache corpus %5d  %s\n' "$pkg" "$name" "$total" "$elapsed" "$rounds" "$corpus" "$status"
done <<<"$targets"
exit $failed
