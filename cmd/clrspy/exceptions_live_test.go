package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// exceptionsDoc is the part of `clrspy exceptions --json` the tests read.
type exceptionsDoc struct {
	EventsLost     uint64 `json:"events_lost"`
	Complete       bool   `json:"complete"`
	Thrown         int64  `json:"thrown"`
	Caught         int64  `json:"caught"`
	Uncaught       int64  `json:"uncaught"`
	OpenAtEnd      int64  `json:"open_at_end"`
	FinallyRuns    int64  `json:"finally_runs"`
	FilterRuns     int64  `json:"filter_runs"`
	HandlingEvents bool   `json:"handling_events"`
	Types          []struct {
		Type     string `json:"type"`
		Count    int64  `json:"count"`
		Caught   int64  `json:"caught"`
		Patterns []struct {
			Pattern string `json:"pattern"`
			Count   int64  `json:"count"`
		} `json:"patterns"`
		ThrowSites []struct {
			Site  string   `json:"site"`
			Stack []string `json:"stack"`
			Count int64    `json:"count"`
		} `json:"throw_sites"`
		CatchSites []struct {
			Site  string `json:"site"`
			Count int64  `json:"count"`
		} `json:"catch_sites"`
	} `json:"types"`
}

// TestExceptionsLive launches the throws workload (two threads, four
// exception types, each thrown from its own method and caught in its
// own) under `clrspy exceptions --json`. Counting is exact, load or not:
// nothing may be lost, every count per type, site, message pattern,
// catch, finally and filter equals what the workload did, and the sites
// are the workload's methods by name.
func TestExceptionsLive(t *testing.T) {
	argv := workload.Argv(t, "throws", "threads=2", "count=200")
	out := filepath.Join(t.TempDir(), "exceptions.json")
	stdout, stderr, err := runCaptured(t, append([]string{"exceptions", "--json", "-o", out, "--"}, argv...)...)
	if err != nil {
		t.Fatalf("clrspy exceptions: %v\nstderr:\n%s", err, tail(stderr))
	}
	wl, err := workload.ParseResult(stdout)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, tail(stderr))
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var d exceptionsDoc
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var counts map[string]int64
	var throwSites, catchSites map[string]string
	if err := wl.Get("counts", &counts); err != nil {
		t.Fatal(err)
	}
	if err := wl.Get("throwSites", &throwSites); err != nil {
		t.Fatal(err)
	}
	if err := wl.Get("catchSites", &catchSites); err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, n := range counts {
		total += n
	}
	if d.EventsLost != 0 || !d.Complete {
		t.Fatalf("events lost %d, complete %v: the counts below could not be exact", d.EventsLost, d.Complete)
	}
	// The workload's exceptions are all the runtime throws in this run
	// (startup throws none on .NET 10).
	if d.Thrown != total || d.Caught != total || d.Uncaught != 0 || d.OpenAtEnd != 0 || !d.HandlingEvents {
		t.Errorf("thrown %d caught %d uncaught %d open %d handling %v; want %d thrown and caught", d.Thrown, d.Caught, d.Uncaught, d.OpenAtEnd, d.HandlingEvents, total)
	}
	if want := wl.Int("finallys"); d.FinallyRuns != want {
		t.Errorf("finally runs %d, want %d", d.FinallyRuns, want)
	}
	if want := wl.Int("filters"); d.FilterRuns != want {
		t.Errorf("filter runs %d, want %d", d.FilterRuns, want)
	}
	patterns := map[string]string{
		"System.InvalidOperationException":                "order <n> not found",
		"System.ArgumentException":                        "bad token at <hex>",
		"System.TimeoutException":                         "request <guid> timed out",
		"System.Collections.Generic.KeyNotFoundException": "The given key '<n>' was not present in the dictionary.",
	}
	if len(d.Types) != len(counts) {
		t.Errorf("%d types, want %d", len(d.Types), len(counts))
	}
	for _, ty := range d.Types {
		want, ok := counts[ty.Type]
		if !ok {
			t.Errorf("unexpected type %s (%d)", ty.Type, ty.Count)
			continue
		}
		if ty.Count != want || ty.Caught != want {
			t.Errorf("%s: %d thrown, %d caught; want %d", ty.Type, ty.Count, ty.Caught, want)
		}
		if len(ty.Patterns) != 1 || ty.Patterns[0].Pattern != patterns[ty.Type] || ty.Patterns[0].Count != want {
			t.Errorf("%s: patterns %+v, want one %q", ty.Type, ty.Patterns, patterns[ty.Type])
		}
		var sited int64
		for _, s := range ty.ThrowSites {
			if !strings.HasPrefix(s.Site, throwSites[ty.Type]+"(") {
				t.Errorf("%s: throw site %q, want %s(...)", ty.Type, s.Site, throwSites[ty.Type])
			}
			if !containsPrefix(s.Stack, throwSites[ty.Type]+"(") || !containsPrefix(s.Stack, catchSites[ty.Type]+"(") {
				t.Errorf("%s: stack %q lacks the throwing or the catching method", ty.Type, s.Stack)
			}
			sited += s.Count
		}
		if sited != want {
			t.Errorf("%s: throw sites add up to %d, want %d", ty.Type, sited, want)
		}
		if len(ty.CatchSites) != 1 || !strings.HasPrefix(ty.CatchSites[0].Site, catchSites[ty.Type]+"(") || ty.CatchSites[0].Count != want {
			t.Errorf("%s: catch sites %+v, want %s(...) %d times", ty.Type, ty.CatchSites, catchSites[ty.Type], want)
		}
	}
}

func containsPrefix(ss []string, p string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
