package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/requests"
)

// TestWaterfallBar: each cell shows the part that covers most of it, a
// part shorter than a cell still marks one, the rest is '='.
func TestWaterfallBar(t *testing.T) {
	q := &requests.Request{StartNanos: 1000, EndNanos: 2000, Segments: []requests.Segment{
		{Kind: requests.SegGCPaused, GC: 3, BeginNanos: 1100, EndNanos: 1200},
		{Kind: requests.SegSuspended, BeginNanos: 1250, EndNanos: 1251},
		{Kind: requests.SegLockWait, BeginNanos: 1500, EndNanos: 1600},
		{Kind: requests.SegBlocked, BeginNanos: 1600, EndNanos: 1640},
		{Kind: requests.SegHTTPOut, BeginNanos: 1700, EndNanos: 2000}}}
	if got := waterfallBar(q, 10); got != "=GS==LBHHH" {
		t.Errorf("bar %q, want =GS==LBHHH", got)
	}
	if got := waterfallBar(q, 5); got != "G=LBH" && got != "GSLBH" {
		t.Errorf("5-cell bar %q", got)
	}
}

// TestWaterfallText: the slowest full width, the others in proportion,
// every line within 100 columns, the status or '?'.
func TestWaterfallText(t *testing.T) {
	slow := []requests.Request{
		{Method: "GET", Path: "/orders/12345678901234567890/items", Status: 200, StartNanos: 0, EndNanos: 10_000_000,
			Segments: []requests.Segment{{Kind: requests.SegGCPaused, BeginNanos: 0, EndNanos: 5_000_000}}},
		{Method: "POST", Path: "/a", StartNanos: 0, EndNanos: 5_000_000}}
	var b bytes.Buffer
	writeWaterfalls(&b, slow)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
	want1 := "  GET /orders/12345678901~ 200  10.000ms |" + strings.Repeat("G", 28) + strings.Repeat("=", 28) + "|"
	want2 := "  POST /a                    ?   5.000ms |" + strings.Repeat("=", 28) + "|"
	if lines[3] != want1 || lines[4] != want2 {
		t.Errorf("rows\n%q\n%q\nwant\n%q\n%q", lines[3], lines[4], want1, want2)
	}
}
