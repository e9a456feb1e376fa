//go:build compat

package main

import (
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestGCEqualsTraceEventCompat holds the GC equality claim (see
// traceevent_test.go) on every trace of the compatibility suite: each is
// read by TraceEvent, the ones without GCs included (both sides must find
// none). The counts are TraceEvent's rows.
func TestGCEqualsTraceEventCompat(t *testing.T) {
	cases := map[string]struct {
		rows, complete int
		diff           teDiff
	}{
		"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace": {rows: 478, complete: 478},
		"RememberCalendar__trace.nettrace":                           {rows: 1, complete: 1},
		"filtrace__activity.nettrace":                                {rows: 6, complete: 6},
		"filtrace__alloc.nettrace":                                   {rows: 7, complete: 7},
		"filtrace__contention.nettrace":                              {rows: 6, complete: 6},
		"filtrace__exceptions.nettrace":                              {rows: 6, complete: 6},
		"filtrace__threadpool.nettrace":                              {rows: 6, complete: 6},
		"filtrace__wait.nettrace":                                    {rows: 6, complete: 6},
		// Cut inside its last event block (offset 4,170,673): clrspy
		// delivers 19,911 events (385 GCs started, 1767–2151), TraceEvent
		// 19,799 (GCs 1768–2149). GC 1767 began before the trace.
		//
		// GC 1855, a foreground GC, suspended the runtime at 5323.2507 ms
		// while background GC 1794's last SuspendForGCPrep stop (5316.1561 →
		// RestartEEEnd 5378.0979, another thread) was on. PerfView keeps one
		// suspension per process: 1855's SuspendEEBegin overwrote the
		// stop's start, and the BGC's RestartEEEnd cleared it, so 1855's
		// GCStart (5378.5178) found no suspension and made no GC, and 1794's
		// last stop counts from 5323.2507. clrspy tracks suspensions per
		// thread: 1855 is a row (pause 64.6649 ms) and 1794's stop is whole.
		"diagnostics__trace.nettrace": {rows: 381, complete: 381, diff: teDiff{
			cutEvents: 19799,
			dropped:   map[uint32]string{1855: "its suspension overlapped BGC 1794's last stop"},
			pauseDelta: map[uint32]teDelta{1794: {ms: -(5323.2507 - 5316.1561),
				why: "its last stop counted from GC 1855's SuspendEEBegin"}},
		}},
		"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace": {},
		"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace":        {},
		"filtrace__jit.nettrace":                                                  {},
		"perfview__VoiceMemo.23092.nettrace":                                      {},
		"perfview__eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace":           {},
		"perfview__eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace": {},
		"perfview__mixed_managed_external_samples.nettrace":                       {},
		"perfview__only_managed_samples.nettrace":                                 {},
		"perfview__eventpipe-dotnetcore2.1-linux-x64-objver3.netperf":             {},
		"perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf":        {},
	}
	dir := tracetest.CompatDir(t)
	var files []string
	for _, pat := range []string{"*.nettrace", "*.netperf"} {
		m, err := filepath.Glob(filepath.Join(dir, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	seen := map[string]bool{}
	for _, path := range files {
		name := filepath.Base(path)
		seen[name] = true
		c, ok := cases[name]
		if !ok {
			t.Errorf("%s: a new compatibility trace: add its counts here", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			rows := compareWithTraceEvent(t, path, c.diff)
			complete := 0
			for _, g := range rows {
				if g.Complete {
					complete++
				}
			}
			if len(rows) != c.rows || complete != c.complete {
				t.Errorf("TraceEvent: %d GCs, %d complete; want %d, %d", len(rows), complete, c.rows, c.complete)
			}
		})
	}
	for name := range cases {
		if !seen[name] {
			t.Errorf("%s is not in %s", name, dir)
		}
	}
}
