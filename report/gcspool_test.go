package report

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
)

// A bounded analysis whose retired rows go through a spool writes the same
// JSON and CSV bytes as the analysis that keeps every row. MaxGCs 2 makes
// nearly every row go through the spool; the server and composite traces
// have background GCs, which finish after GCs that started later and so
// hold retirement back.
func TestGCSpoolWritesWhatTheWholeListWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows int // GCs in the trace
	}{
		{"gc-wks.nettrace", 40},
		{"gc-server.nettrace", 12},
		{"composite.nettrace", 175},
		{"gc-wks.truncated.nettrace", 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "../testdata/traces/" + tc.name
			whole := gcResult(t, path)
			if len(whole.GCs) != tc.rows {
				t.Fatalf("%d GCs, want %d", len(whole.GCs), tc.rows)
			}
			in := Input{Source: tc.name}
			var wantJSON, wantCSV bytes.Buffer
			if err := WriteGCJSON(&wantJSON, in, whole); err != nil {
				t.Fatal(err)
			}
			if err := WriteGCCSV(&wantCSV, whole); err != nil {
				t.Fatal(err)
			}
			for _, asCSV := range []bool{false, true} {
				sp := NewGCSpool(asCSV)
				defer sp.Close()
				var a *gcpause.Analyzer
				readTrace(t, path, func(h *nettrace.Header) func(*nettrace.Event) {
					a = gcpause.New(h, gcpause.Options{MaxGCs: 2, OnRetire: sp.Add})
					return a.Event
				})
				res := a.Result()
				if sp.Len() == 0 || len(res.GCs) >= len(whole.GCs) {
					t.Fatalf("csv=%v: %d spooled, %d kept of %d: the spool was not used", asCSV, sp.Len(), len(res.GCs), len(whole.GCs))
				}
				if sp.Len()+len(res.GCs) != len(whole.GCs) {
					t.Fatalf("csv=%v: %d spooled + %d kept, want %d rows", asCSV, sp.Len(), len(res.GCs), len(whole.GCs))
				}
				var got bytes.Buffer
				want := &wantJSON
				var err error
				if asCSV {
					err, want = WriteGCCSVSpooled(&got, res, sp), &wantCSV
				} else {
					err = WriteGCJSONSpooled(&got, in, res, sp)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					g, w := strings.Split(got.String(), "\n"), strings.Split(want.String(), "\n")
					for i := range min(len(g), len(w)) {
						if g[i] != w[i] {
							t.Fatalf("csv=%v: line %d differs:\n got %q\nwant %q", asCSV, i+1, g[i], w[i])
						}
					}
					t.Fatalf("csv=%v: %d lines, want %d", asCSV, len(g), len(w))
				}
			}
		})
	}
}

// TestGCSpoolHits: with the requests each GC hit (a trace with request
// events), the spooled rows gain their requests_hit / RequestsHit as the
// rows kept do: the same bytes as the whole list's, every row with its
// GC's count (here 3 times its number; 0 for a GC absent from the map).
func TestGCSpoolHits(t *testing.T) {
	path := "../testdata/traces/gc-wks.nettrace"
	whole := gcResult(t, path)
	hits := map[uint32]int64{}
	for _, g := range whole.GCs[1:] {
		hits[g.Number] = 3 * int64(g.Number)
	}
	in := Input{Source: "gc-wks.nettrace"}
	var wantJSON, wantCSV bytes.Buffer
	if err := WriteGCJSONHits(&wantJSON, in, whole, nil, hits); err != nil {
		t.Fatal(err)
	}
	if err := WriteGCCSVHits(&wantCSV, whole, nil, hits); err != nil {
		t.Fatal(err)
	}
	var d GCDocument
	if err := json.Unmarshal(wantJSON.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	for i, r := range d.GCs {
		want := 3 * int64(r.Number)
		if i == 0 {
			want = 0
		}
		if r.RequestsHit == nil || *r.RequestsHit != want {
			t.Fatalf("row %d (GC %d): requests_hit %v, want %d", i, r.Number, r.RequestsHit, want)
		}
	}
	lines := strings.Split(strings.TrimSpace(wantCSV.String()), "\n")
	if !strings.HasSuffix(lines[0], ",RequestsHit") || len(lines) < 3 {
		t.Fatalf("CSV header %q, %d lines", lines[0], len(lines))
	}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		n, _ := strconv.Atoi(f[0])
		if want := strconv.FormatInt(hits[uint32(n)], 10); f[len(f)-1] != want {
			t.Fatalf("CSV row %q: RequestsHit %s, want %s", l, f[len(f)-1], want)
		}
	}
	for _, asCSV := range []bool{false, true} {
		sp := NewGCSpool(asCSV)
		defer sp.Close()
		var a *gcpause.Analyzer
		readTrace(t, path, func(h *nettrace.Header) func(*nettrace.Event) {
			a = gcpause.New(h, gcpause.Options{MaxGCs: 2, OnRetire: sp.Add})
			return a.Event
		})
		res := a.Result()
		if sp.Len() == 0 {
			t.Fatal("the spool was not used")
		}
		var got bytes.Buffer
		want := &wantJSON
		var err error
		if asCSV {
			err, want = WriteGCCSVHits(&got, res, sp, hits), &wantCSV
		} else {
			err = WriteGCJSONHits(&got, in, res, sp, hits)
		}
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("csv=%v: the spooled output differs from the whole list's", asCSV)
		}
	}
}
