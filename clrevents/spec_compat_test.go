//go:build compat

package clrevents

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// No trace of the compatibility suite (.NET Core 2.1 to .NET 9: the
// runtime's, dotnet-trace's and PerfView's test traces) carries a decoded
// event in a version newer than the table's decoder reads. The counts say
// the check saw what it should.
func TestCompatVersionsKnown(t *testing.T) {
	decoded := 0
	read := eachCompatEvent(t, func(file string, ev *nettrace.Event) {
		m := ev.Meta
		if v, ok := Lookup(m.Runtime, m.EventID).Version(); ok {
			decoded++
			if m.Version > v {
				t.Errorf("%s: %s v%d, the decoder reads v%d", file, m.Name, m.Version, v)
			}
		}
	})
	// 512,309: 504,223 before this stop's decoders, plus filtrace
	// exceptions' 8,000 exception events, 75 thread-pool events
	// (ThreadPoolWorkerThread*, adjustments, min/max) and 11 heap-dump
	// events (GCBulkNode, Edge, RootEdge, RootStaticVar, ...).
	if read != 19 || decoded != 512_309 {
		t.Fatalf("%d files read, %d decoded events; want 19 and 512,309 (the suite changed?)", read, decoded)
	}
}

// eachCompatEvent calls fn with every event of every readable trace of the
// compatibility suite (and the trace's file name), in file order, and
// returns how many traces it read. A cut or malformed stream ends its file
// (the suite's hostile files: hostile_test's business); another error fails t.
func eachCompatEvent(t *testing.T, fn func(file string, ev *nettrace.Event)) (read int) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tracetest.CompatDir(t), "*.net*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := nettrace.NewReader(f)
		if err != nil {
			f.Close()
			continue // the suite's unreadable files (CATALOG.md): hostile_test's business
		}
		read++
		file := filepath.Base(path)
		err = tracetest.ReadAll(t, r, func(ev *nettrace.Event) { fn(file, ev) })
		f.Close()
		var fe *nettrace.FormatError
		if err != nil && !errors.Is(err, nettrace.ErrTruncated) && !errors.As(err, &fe) {
			t.Fatal(file, err)
		}
	}
	return read
}
