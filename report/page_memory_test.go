package report

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/browsertest"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/stacks"
)

// memorySamples are n samples a second apart: a GC heap flat at 30 MiB,
// a native heap growing 5 MiB a second from 10 MiB, images at 40 MiB.
func memorySamples(n int) []memory.Sample {
	var ss []memory.Sample
	for i := 0; i < n; i++ {
		parts := make([]memory.Part, len(memory.Kinds))
		var rss uint64
		for j, k := range memory.Kinds {
			parts[j].Kind = k
			switch k {
			case memory.GCHeap:
				parts[j].Bytes = 30 << 20
			case memory.NativeHeap:
				parts[j].Bytes = 10<<20 + uint64(i)*5<<20
			case memory.Images:
				parts[j].Bytes = 40 << 20
			case memory.Stacks:
				parts[j].Bytes = 1 << 20
			}
			rss += parts[j].Bytes
		}
		ss = append(ss, memory.Sample{AtNs: int64(i) * 1e9, Split: memory.Split{Rss: rss, Parts: parts}, CgroupUsage: rss + 5<<20})
	}
	return ss
}

// TestPageMemoryOf: the section's columns are the samples' parts on the
// page's clock (offset by where the samples' clock starts), Kinds order.
func TestPageMemoryOf(t *testing.T) {
	ss := memorySamples(3)
	m := PageMemoryOf(ss, 2500e6, 200<<20, 100<<20)
	if len(m.Kinds) != 8 || m.Kinds[0] != "gc_heap" || m.Kinds[4] != "native_heap" || m.Labels[4] != "native heap" {
		t.Fatalf("kinds %v labels %v", m.Kinds, m.Labels)
	}
	if want := []float64{2500, 3500, 4500}; !equalFloats(m.TMs, want) {
		t.Errorf("t_ms %v, want %v", m.TMs, want)
	}
	if got := m.Bytes[4]; got[0] != 10<<20 || got[2] != 20<<20 {
		t.Errorf("native heap %v", got)
	}
	if m.Rss[2] != 91<<20 || m.LimitBytes != 200<<20 || m.UsageBytes != 100<<20 {
		t.Errorf("rss %v limit %d usage %d", m.Rss, m.LimitBytes, m.UsageBytes)
	}
	if !strings.HasPrefix(m.Judgement, "RSS +10.0 MiB in 2 s: native heap grows 5.0 MiB/s") {
		t.Errorf("judgement %q", m.Judgement)
	}
	if PageMemoryOf(nil, 0, 0, 0) != nil {
		t.Error("a section without samples")
	}
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9 {
			return false
		}
	}
	return true
}

// TestPageMemoryChart draws a page of the memory section alone in
// Chromium: one stacked area per part, each carrying its part's MiB at
// every sample, whose upper edge is the sum of the parts up to it on the
// chart's scale (read back from the path's coordinates); the cgroup's
// limit is a line at its MiB, the GC panels are hidden, and the section's
// line names the growing part.
func TestPageMemoryChart(t *testing.T) {
	ss := memorySamples(11) // native 10 → 60 MiB, RSS 81 → 131 MiB
	limit := uint64(160 << 20)
	pp := PageParts{Title: "memory", Input: Input{Source: "pid 42", Live: true, Complete: true}, Pid: 42,
		Start: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), FirstNanos: ss[0].AtNs, LastNanos: ss[len(ss)-1].AtNs,
		Memory: PageMemoryOf(ss, 0, limit, ss[len(ss)-1].CgroupUsage)}
	b := openPage(t, pp)
	hidden := browsertest.MustEval[[]bool](t, b, `['p-memory', 'p-timeline', 'p-table', 'summary'].map(id => document.getElementById(id).hidden)`)
	if hidden[0] || !hidden[1] || !hidden[2] || !hidden[3] {
		t.Errorf("hidden memory, timeline, table, summary: %v; want only the memory section shown", hidden)
	}
	type area struct {
		Kind string
		MB   string
		D    string
	}
	chart := browsertest.MustEval[struct {
		YMax, Y0, Y1 float64
		Areas        []area
		Limit        float64
	}](t, b, `(() => {
		const svg = document.querySelector('#memchart svg');
		const l = svg.querySelector('line.memlimit');
		return {YMax: +svg.dataset.ymaxMb, Y0: +svg.dataset.y0, Y1: +svg.dataset.y1, Limit: l ? +l.dataset.limitMb : -1,
			Areas: [...svg.querySelectorAll('path[data-kind]')].map(p => ({Kind: p.dataset.kind, MB: p.dataset.mb, D: p.getAttribute('d')}))};
	})()`)
	if len(chart.Areas) != len(memory.Kinds) {
		t.Fatalf("%d areas, want %d", len(chart.Areas), len(memory.Kinds))
	}
	// RSS at most 131 MiB, the limit 160: the scale's top is niceMax(160).
	if chart.YMax != 200 || chart.Limit != 160 {
		t.Errorf("scale top %v MiB, limit line %v MiB; want 200 and 160", chart.YMax, chart.Limit)
	}
	cum := make([]float64, len(ss))
	for k, a := range chart.Areas {
		kind := memory.Kinds[k]
		if a.Kind != string(kind) {
			t.Errorf("area %d is %s, want %s", k, a.Kind, kind)
		}
		var mb []float64
		for _, v := range strings.Split(a.MB, ",") {
			x, _ := strconv.ParseFloat(v, 64)
			mb = append(mb, x)
		}
		if len(mb) != len(ss) {
			t.Fatalf("%s: %d values, want %d", kind, len(mb), len(ss))
		}
		for i := range ss {
			if want := float64(ss[i].Split.Bytes(kind)) / (1 << 20); math.Abs(mb[i]-want) > 1e-3 {
				t.Errorf("%s at sample %d: %v MiB, want %v", kind, i, mb[i], want)
			}
			cum[i] += mb[i]
		}
		// The upper edge: the first len(ss) points of the path.
		ys := pathYs(a.D)
		for i := range ss {
			want := chart.Y0 - cum[i]/chart.YMax*(chart.Y0-chart.Y1)
			if math.Abs(ys[i]-want) > 0.02 {
				t.Errorf("%s at sample %d: upper edge at y %v, want %v (%v MiB stacked)", kind, i, ys[i], want, cum[i])
			}
		}
	}
	if native := chart.Areas[4].MB; !strings.HasPrefix(native, "10,15,20,") || !strings.HasSuffix(native, ",60") {
		t.Errorf("native heap series %q, want 10 → 60 MiB by 5", native)
	}
	if cum[10] != 131 {
		t.Errorf("stacked at the end %v MiB, want RSS 131", cum[10])
	}
	sub := browsertest.MustEval[string](t, b, `document.getElementById('memory-sub').textContent`)
	if !strings.Contains(sub, "11 samples · RSS 81.0 MiB → 131.0 MiB · cgroup limit 160.0 MiB, headroom 24.0 MiB") ||
		!strings.Contains(sub, "native heap grows 5.0 MiB/s (+50.0 MiB) while the GC heap is flat") {
		t.Errorf("section's line %q", sub)
	}
}

// pathYs are the y coordinates of an SVG path of M and L commands.
func pathYs(d string) []float64 {
	var ys []float64
	for _, seg := range strings.FieldsFunc(d, func(r rune) bool { return r == 'M' || r == 'L' || r == 'Z' }) {
		f := strings.Fields(seg)
		if len(f) == 2 {
			y, _ := strconv.ParseFloat(f[1], 64)
			ys = append(ys, y)
		}
	}
	return ys
}

// TestPageNativeFlame: memory --native's page has its stacks as two flame
// graph views, outstanding first, a stack as wide as its KiB (rounded
// up); the panel's line counts KiB, not samples; the GC panels stay
// hidden beside the memory section.
func TestPageNativeFlame(t *testing.T) {
	n := &MemoryNativeJSON{SampleBytes: 16384,
		Outstanding: []MemoryNativeStackJSON{
			{Frames: []string{"malloc", "System.Runtime.InteropServices.NativeMemory.Alloc(unsigned int)", "Workload.NativeLeak.LeakHGlobal(int64,int32)", "Workload.Program.Main(class System.String[])"}, Bytes: 64 << 20, Count: 4096},
			{Frames: []string{"malloc", "Workload.NativeLeak.LeakMalloc(int64,int32)", "Workload.Program.Main(class System.String[])"}, Bytes: 32<<20 + 1, Count: 2048},
		},
		Allocated: []MemoryNativeStackJSON{{Frames: []string{"malloc", "_Znwm"}, Bytes: 1000, Count: 3}}}
	views := NativeFlameViews(n)
	if len(views) != 2 || views[0].Label != LabelNativeOutstanding || views[0].Profile.Total != 65536+32769 || views[1].Profile.Total != 1 || views[0].Unit != "KiB" {
		t.Fatalf("views %+v", views)
	}
	if p := views[0].Profile; len(p.Frames) != 5 || p.Frames[0].Kind != stacks.KindNative || p.Frames[1].Kind != stacks.KindManaged {
		t.Errorf("frames %+v: want malloc native, the four managed methods shared", p.Frames)
	}
	ss := memorySamples(3)
	pp := PageParts{Title: "memory", Input: Input{Source: "pid 42", Live: true, Complete: true}, Pid: 42,
		FirstNanos: ss[0].AtNs, LastNanos: ss[len(ss)-1].AtNs, Memory: PageMemoryOf(ss, 0, 0, 0), Views: views}
	b := openPage(t, pp)
	got := browsertest.MustEval[struct {
		Title, Sub, Total string
		Views             []string
		Timeline, Memory  bool
	}](t, b, `({Title: document.getElementById('flame-title').textContent, Sub: document.getElementById('flame-sub').textContent,
		Total: document.getElementById('flame').dataset.total, Views: [...document.querySelectorAll('#flame-view button')].map(b => b.textContent),
		Timeline: !document.getElementById('p-timeline').hidden, Memory: !document.getElementById('p-memory').hidden})`)
	root := browsertest.MustEval[string](t, b, `document.querySelector('#flame .root').textContent`)
	if got.Title != "Native memory outstanding" || got.Total != "98305" || got.Sub != "98,305 KiB" || root != "all (98,305 KiB)" {
		t.Errorf("flame %q, total %s, line %q, root %q: want the outstanding view, 98305 KiB", got.Title, got.Total, got.Sub, root)
	}
	if strings.Join(got.Views, "|") != LabelNativeOutstanding+"|"+LabelNativeAllocated || got.Timeline || !got.Memory {
		t.Errorf("views %v, GC timeline shown %v, memory shown %v", got.Views, got.Timeline, got.Memory)
	}
}

// openPage writes the page of pp to a file and opens it in Chromium,
// drawn.
func openPage(t *testing.T, pp PageParts) *browsertest.Browser {
	t.Helper()
	path := filepath.Join(t.TempDir(), "page.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePage(f, NewPage(pp)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return browsertest.OpenPage(t, path)
}
