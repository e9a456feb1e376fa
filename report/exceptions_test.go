package report

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// exceptionsFixture analyses testdata/traces/exceptions.nettrace.gz (the
// throws workload: 80, 40, 20 and 20 exceptions of four types).
func exceptionsFixture(t *testing.T) *exceptions.Result {
	t.Helper()
	r := tracetest.OpenFile(t, tracetest.Path(t, "exceptions.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	sym := stacks.NewSymbols(r.Header())
	a := exceptions.New(r.Header(), exceptions.Options{Symbols: sym})
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		a.Event(ev)
		sym.Event(ev)
	}); err != nil {
		t.Fatal(err)
	}
	return a.Result()
}

// TestExceptionsOutputs: the pprof profile's samples add up to every
// exception, per type label; the JSON document has the contract's keys
// and the counts; the text report names the sites; a partial input says
// so in the text's first line and the profile's comments.
func TestExceptionsOutputs(t *testing.T) {
	res := exceptionsFixture(t)
	in := Input{Source: "exceptions", Complete: false, Partial: []string{"3 events were lost"}}
	var pb bytes.Buffer
	if err := WriteExceptionsPprof(&pb, in, res, time.Unix(0, 0), time.Second); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&pb)
	if err != nil {
		t.Fatal(err)
	}
	byType := map[string]int64{}
	leaves := map[string]string{"System.InvalidOperationException": "Workload.ExcOrders.Lookup(int32)",
		"System.Collections.Generic.KeyNotFoundException": "System.ThrowHelper.ThrowKeyNotFoundException(!!0)"}
	for _, s := range p.Sample {
		typ := s.Label["type"][0]
		byType[typ] += s.Value[0]
		// The dispatcher's frames are left out: the leaf throws.
		if leaf := s.Location[0].Line[0].Function.Name; leaves[typ] != "" && leaf != leaves[typ] {
			t.Errorf("%s: leaf frame %q, want %q", typ, leaf, leaves[typ])
		}
	}
	want := map[string]int64{"System.InvalidOperationException": 80, "System.ArgumentException": 40,
		"System.TimeoutException": 20, "System.Collections.Generic.KeyNotFoundException": 20}
	for k, n := range want {
		if byType[k] != n {
			t.Errorf("pprof %s: %d, want %d", k, byType[k], n)
		}
	}
	if len(p.Comments) != 1 || !strings.HasPrefix(p.Comments[0], "PARTIAL REPORT: 3 events were lost") {
		t.Errorf("comments %q", p.Comments)
	}

	var jb bytes.Buffer
	if err := WriteExceptionsJSON(&jb, NewExceptionsDocument(in, res, time.Second)); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Thrown     int64 `json:"thrown"`
		EventsLost *int  `json:"events_lost"`
		Complete   *bool `json:"complete"`
		Types      []struct {
			Type       string `json:"type"`
			Count      int64  `json:"count"`
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
	if err := json.Unmarshal(jb.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.Thrown != 160 || d.EventsLost == nil || d.Complete == nil || *d.Complete || len(d.Types) != 4 ||
		d.Types[0].Count != 80 || len(d.Types[0].ThrowSites) == 0 || len(d.Types[0].ThrowSites[0].Stack) < 3 ||
		len(d.Types[0].CatchSites) != 1 || d.Types[0].CatchSites[0].Site != "Workload.ExcOrders.TryLookup(int32)" {
		t.Errorf("JSON %s", jb.Bytes())
	}

	var tb bytes.Buffer
	if err := WriteExceptionsText(&tb, in, res, time.Second); err != nil {
		t.Fatal(err)
	}
	text := tb.String()
	for _, w := range []string{"PARTIAL REPORT: 3 events were lost\n", "  160 thrown (first chance)",
		"System.InvalidOperationException: 80 (80 caught, 0 uncaught)", `"order <n> not found"`,
		"Workload.ExcOrders.Lookup(int32)", "caught in:\n          80  Workload.ExcOrders.TryLookup(int32)"} {
		if !strings.Contains(text, w) {
			t.Errorf("text lacks %q:\n%s", w, text)
		}
	}
}

// TestPageExceptions: the report page's exceptions table on the fixture,
// bounded to two types (the rest counted in More), sites with their first
// frames, catches and patterns; and a page with it names the section.
func TestPageExceptions(t *testing.T) {
	res := exceptionsFixture(t)
	pe := NewPageExceptions(res, 2)
	if pe.Thrown != 160 || pe.Caught != 160 || len(pe.Types) != 2 || pe.More != 2 {
		t.Fatalf("%+v", pe)
	}
	ioe := pe.Types[0]
	if ioe.Type != "System.InvalidOperationException" || ioe.Count != 80 || len(ioe.Sites) == 0 ||
		ioe.Sites[0].Site != "Workload.ExcOrders.Lookup(int32)" || len(ioe.Sites[0].Stack) < 3 ||
		len(ioe.Catches) != 1 || ioe.Catches[0].Site != "Workload.ExcOrders.TryLookup(int32)" ||
		len(ioe.Patterns) != 1 || ioe.Patterns[0].Site != "order <n> not found" {
		t.Errorf("%+v", ioe)
	}
	p := NewPage(PageParts{Title: "t", Exceptions: res})
	if p.Exceptions == nil || p.Exceptions.Thrown != 160 {
		t.Errorf("page exceptions %+v", p.Exceptions)
	}
	if NewPage(PageParts{Title: "t", Exceptions: &exceptions.Result{}}).Exceptions != nil {
		t.Error("a page without exceptions has the section")
	}
}

// TestDistinctCallers: rows of one throw site thrown from different
// callers show the callers up to where they differ; a site named once
// shows none (the exceptions fixture's four sites, one each).
func TestDistinctCallers(t *testing.T) {
	v := "Shop.OrderValidator.Validate(int32)"
	stacks := []exceptions.Stack{
		{Frames: []string{"System.Runtime.EH.DispatchEx()", v, "Shop.Checkout.Submit()", "Shop.Api.Post()"}},
		{Frames: []string{"System.Runtime.EH.DispatchEx()", v, "Shop.Cart.Add()", "Shop.Api.Put()"}},
		{Frames: []string{"System.Runtime.EH.DispatchEx()", v, "Shop.Cart.Add()", "Shop.Batch.Run()"}},
		{Frames: []string{"System.Runtime.EH.DispatchEx()", "Shop.Other.Throw()", "Shop.Api.Post()"}},
	}
	sites := []exceptions.ThrowSite{{Site: v, Stack: 0, Count: 30}, {Site: v, Stack: 1, Count: 20}, {Site: v, Stack: 2, Count: 10}, {Site: "Shop.Other.Throw()", Stack: 3, Count: 5}}
	got := distinctCallers(sites, stacks)
	want := []string{" ← Shop.Checkout.Submit()", " ← Shop.Cart.Add() ← Shop.Api.Put()", " ← Shop.Cart.Add() ← Shop.Batch.Run()", ""}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: %q, want %q", i, got[i], want[i])
		}
	}
}
