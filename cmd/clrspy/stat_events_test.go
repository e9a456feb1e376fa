package main

import (
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestStatEvents: --events prints the canonical dump with runtime payloads
// decoded (nettrace.Dumper with clrevents.Describe; its golden is
// clrevents/testdata/describe-gc-wks.truncated.txt): a header line, one
// line per event, and an end line naming the cut. A cut trace is not an
// error; --json with --events is.
func TestStatEvents(t *testing.T) {
	path := tracetest.Path(t, "gc-wks.truncated.nettrace")
	out, err := runCLI(t, "stat", "--events", path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 466 || !strings.HasPrefix(lines[0], "# nettrace V4 pointer=8 pid=22587 ") ||
		!strings.HasPrefix(lines[465], "# end: 464 events, 0 lost; truncated at offset 25648 (inside EventBlock)") {
		t.Fatalf("%d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
	for _, want := range []string{
		" tid=22587 Microsoft-Windows-DotNETRuntime/GC/Start v2 {Count:1 Depth:2 Reason:AllocLarge Type:Background ClientSequenceNumber:0}\n",
		" tid=22587 Microsoft-Windows-DotNETRuntime/GC/Start v2 {Count:2 Depth:0 Reason:AllocSmall Type:Foreground ClientSequenceNumber:0}\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if _, err := runCLI(t, "stat", "--events", "--json", path); err == nil || err.Error() != "--events and --json contradict each other" {
		t.Errorf("--events --json: %v", err)
	}
}
