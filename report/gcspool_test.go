package report

import (
	"bytes"
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
