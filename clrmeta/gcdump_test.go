package clrmeta_test

import (
	"os"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/workload"
)

// TestGCDumpStaticNames: dotnet-gcdump names the graph workload's static
// Holder "Workload.GraphHolder.Holder" (its object's type, taken for the
// class); read with the modules the file names (Workload.dll: this tree's
// build), the root is Workload.Graph.Holder.
func TestGCDumpStaticNames(t *testing.T) {
	f, err := os.Open(tracetest.Path(t, "heap-graph-dotnet-gcdump.gcdump"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := heapgraph.ReadGCDump(f)
	if err != nil {
		t.Fatal(err)
	}
	dll := workload.Exe(t) + ".dll"
	g.NameStatics(func(path string, want map[string]bool) ([]clrmeta.StaticField, error) {
		if strings.HasSuffix(path, "/Workload.dll") {
			path = dll // the file was recorded in another tree
		}
		return clrmeta.StaticFields(path, want)
	})
	m, err := g.Matcher("Workload.GraphLeaf")
	if err != nil {
		t.Fatal(err)
	}
	ps := g.Why(m)
	if len(ps) != 1 || ps[0].RootKind != heapgraph.RootStatic || ps[0].Root != "Workload.Graph.Holder" {
		t.Errorf("GraphLeaf's paths %+v, want one from the static Workload.Graph.Holder", ps)
	}
}
