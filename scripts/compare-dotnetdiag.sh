#!/usr/bin/env bash
# Times clrspy's nettrace reader and pyroscope-io/dotnetdiag's parser on the
# same trace, alternating runs on the same machine: the issue's throughput
# target was set against dotnetdiag's figures, and a shared VM's speed drifts
# too much to compare figures taken at different times.
#
#   scripts/compare-dotnetdiag.sh DOTNETDIAG_DIR [ROUNDS]
#
# DOTNETDIAG_DIR is a checkout of github.com/pyroscope-io/dotnetdiag (no
# network here: e.g. a mirror exported with git archive). The script writes
# one benchmark file of its own into a scratch copy of it; nothing of
# dotnetdiag enters this project.
set -euo pipefail
src=${1:?usage: $0 DOTNETDIAG_DIR [ROUNDS]}
rounds=${2:-4}
here=$(cd "$(dirname "$0")/.." && pwd)
trace=$(cd "$here/../shared/traces" && pwd)/perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cp -r "$src"/. "$work"/
# Its nettrace package needs nothing outside the standard library; drop the
# requirements of its other packages so the build needs no module proxy.
printf 'module github.com/pyroscope-io/dotnetdiag\n\ngo 1.16\n' >"$work/go.mod"
rm -f "$work/go.sum"
cat >"$work/nettrace/clrspy_compare_test.go" <<EOF
package nettrace_test

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/pyroscope-io/dotnetdiag/nettrace"
)

// Every event through an empty handler: file order, no stacks resolved.
func BenchmarkDotnetdiag30(b *testing.B) {
	data, err := os.ReadFile("$trace")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	events := 0
	for i := 0; i < b.N; i++ {
		s := nettrace.NewStream(bytes.NewReader(data))
		if _, err := s.Open(); err != nil {
			b.Fatal(err)
		}
		events = 0
		s.EventHandler = func(*nettrace.Blob) error { events++; return nil }
		for {
			if err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(events), "ns/event")
	b.ReportMetric(float64(events), "events")
}
EOF
(cd "$work" && GOFLAGS=-mod=mod go test -c -o "$work/dd.test" ./nettrace)
(cd "$here" && go test -c -o "$work/clrspy.test" ./nettrace)
cd "$here/nettrace"
for _ in $(seq "$rounds"); do
	"$work/dd.test" -test.run '^$' -test.bench 'Dotnetdiag30$' -test.benchtime 60x | grep '^Benchmark'
	"$work/clrspy.test" -test.run '^$' -test.bench 'Read30$|Read30Fresh$|Floor30$' -test.benchtime 60x | grep '^Benchmark'
done
