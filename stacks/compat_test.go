//go:build compat

package stacks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracetest"
)

// Tests on the compatibility suite: third-party traces, with expected
// values from CATALOG.md and dotnetdiag's goldens.

func TestMixedManagedExternal(t *testing.T) {
	p := build(t, tracetest.CompatPath(t, "perfview__mixed_managed_external_samples.nettrace"), Options{})
	// CATALOG.md §8.13: 6,331 samples on one thread, 3,904 Managed + 2,427 External.
	if p.Total != 6331 || p.Managed != 3904 || p.External != 2427 || len(p.Threads) != 1 {
		t.Fatalf("samples %d managed %d external %d threads %d", p.Total, p.Managed, p.External, len(p.Threads))
	}
	_, leaf := frameCounts(p)
	if leaf[NativeFrame] != 2427 {
		t.Errorf("%s leaves = %d, want one per External sample (2427)", NativeFrame, leaf[NativeFrame])
	}
	var ext int64
	for i := range p.Samples {
		s := &p.Samples[i]
		isNative := p.Frames[s.Stack[0]].Name == NativeFrame
		if isNative != (s.Type == clrevents.SampleExternal) {
			t.Fatalf("sample type %v with leaf %q", s.Type, p.Frames[s.Stack[0]].Name)
		}
		if s.Type == clrevents.SampleExternal {
			ext += s.Count
		}
	}
	if ext != 2427 {
		t.Errorf("external samples in profile = %d", ext)
	}
	// Managed-only drops exactly the External samples.
	m := build(t, tracetest.CompatPath(t, "perfview__mixed_managed_external_samples.nettrace"), Options{ManagedOnly: true})
	_, leaf = frameCounts(m)
	if leaf[NativeFrame] != 0 || m.Dropped != 2427 {
		t.Errorf("managed-only: %d native leaves, %d dropped", leaf[NativeFrame], m.Dropped)
	}
	var n int64
	for i := range m.Samples {
		n += m.Samples[i].Count
	}
	if n != 3904 {
		t.Errorf("managed-only keeps %d samples, want 3904", n)
	}
}

func TestOnlyManaged(t *testing.T) {
	p := build(t, tracetest.CompatPath(t, "perfview__only_managed_samples.nettrace"), Options{})
	if p.Total != 7423 || p.Managed != 7423 || p.External != 0 {
		t.Fatalf("samples %d managed %d external %d", p.Total, p.Managed, p.External)
	}
	for _, f := range p.Frames {
		if f.Kind == KindNative {
			t.Fatalf("frame %q in an all-managed trace", f.Name)
		}
	}
	if p.Unresolved != 0 {
		t.Errorf("%d unresolved frames", p.Unresolved)
	}
	incl, _ := frameCounts(p)
	if testing.Verbose() {
		for k, v := range incl {
			t.Logf("%6d %s", v, k)
		}
	}
}

// TestWeights checks that thread time adds up: on the single-thread trace
// the credited time equals the sampled span minus the first interval.
func TestWeights(t *testing.T) {
	p := build(t, tracetest.CompatPath(t, "dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace"), Options{})
	var count, nanos int64
	for i := range p.Samples {
		count += p.Samples[i].Count
		nanos += p.Samples[i].Nanos
	}
	if count != 5564 {
		t.Fatalf("count %d", count)
	}
	// Every interval is below the cap on this trace, so the sum is the span
	// plus one nominal period for the first sample.
	if want := p.DurationNanos + p.PeriodNanos; nanos != want {
		t.Errorf("wall %d, want span+period %d", nanos, want)
	}
	incl, _ := frameCounts(p)
	for _, name := range []string{"Example.Program.Main(class System.String[])", "Example.Program.Work(int32)", "Example.Program.Slow()", "Example.Program.Fast()"} {
		if incl[name] == 0 {
			t.Errorf("no samples in %s", name)
		}
	}
	// Slow() calls Work four times as long as Fast() does (dotnetdiag's
	// golden: 6.51 s vs 1.64 s).
	if r := float64(incl["Example.Program.Slow()"]) / float64(incl["Example.Program.Fast()"]); r < 3.8 || r > 4.2 {
		t.Errorf("Slow/Fast = %.2f, want about 4", r)
	}
	for name := range incl {
		if strings.Contains(name, "!") {
			t.Errorf("default names carry no module prefix: %q", name)
		}
	}
}

// Concurrent sums give the one-goroutine profile on real traces too: the
// 3.0 objver4 trace's 35,161 samples (CATALOG.md) fill four batches, the
// mixed trace's 6,331 stay in the one the end sums.
func TestConcurrentSameProfileCompat(t *testing.T) {
	for _, c := range []struct {
		name  string
		total int64
	}{
		{"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 35161},
		{"perfview__mixed_managed_external_samples.nettrace", 6331},
	} {
		path := tracetest.CompatPath(t, c.name)
		one, conc := build(t, path, Options{}), build(t, path, Options{Concurrent: true})
		if one.Total != c.total {
			t.Fatalf("%s: %d samples", c.name, one.Total)
		}
		if !reflect.DeepEqual(one, conc) {
			t.Fatalf("%s: concurrent profile differs: %d/%d samples, %d/%d sums", c.name, one.Total, conc.Total, len(one.Samples), len(conc.Samples))
		}
	}
}
