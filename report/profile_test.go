//go:build compat

package report

import (
	"bytes"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/stacks"
)

// TestDotnetdiagGoldens reproduces the four folded-stack files of
// pyroscope-io/dotnetdiag byte for byte (CATALOG.md §7.3).
func TestDotnetdiagGoldens(t *testing.T) {
	for _, c := range []struct {
		trace, golden string
		managedOnly   bool
	}{
		{"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", "dotnet-5.0-SampleProfiler-single-thread.txt", false},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-single-thread.golden.nettrace", "dotnet-5.0-SampleProfiler-single-thread-managed-only.txt", true},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", "dotnet-5.0-SampleProfiler-webapp.txt", false},
		{"dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace", "dotnet-5.0-SampleProfiler-webapp-managed-only.txt", true},
	} {
		t.Run(c.golden, func(t *testing.T) {
			want, err := os.ReadFile(tracetest.CompatPath(t, "golden/dotnetdiag/"+c.golden))
			if err != nil {
				t.Fatal(err)
			}
			p := buildProfile(t, tracetest.CompatPath(t, c.trace), stacks.Options{Compat: stacks.CompatDotnetdiag, ManagedOnly: c.managedOnly})
			var got bytes.Buffer
			if err := WriteFolded(&got, p, FoldedOptions{Weight: WeightWall}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				gl, wl := bytes.Split(got.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
				for i := 0; i < len(gl) && i < len(wl); i++ {
					if !bytes.Equal(gl[i], wl[i]) {
						t.Fatalf("line %d differs (got %d lines, want %d):\ngot  %.300s\nwant %.300s", i+1, len(gl), len(wl), gl[i], wl[i])
					}
				}
				t.Fatalf("got %d lines, want %d", len(gl), len(wl))
			}
		})
	}
}

const mixed = "perfview__mixed_managed_external_samples.nettrace"

// TestFoldedGolden: the mixed managed/external trace (CATALOG.md §8.13)
// as folded stacks. Checked by hand once: 6,331 samples in all, the 2,427
// External ones end in [native code], all but two under Console.ReadLine,
// and the managed ones are the NoNativeStacks test program's search loop.
func TestFoldedGolden(t *testing.T) {
	p := buildProfile(t, tracetest.CompatPath(t, mixed), stacks.Options{})
	var buf bytes.Buffer
	if err := WriteFolded(&buf, p, FoldedOptions{}); err != nil {
		t.Fatal(err)
	}
	var total, native, readLine int64
	for _, line := range bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n")) {
		i := bytes.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(string(line[i+1:]), 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		total += n
		if bytes.HasSuffix(line[:i], []byte(";"+stacks.NativeFrame)) {
			native += n
			if bytes.Contains(line, []byte("System.Console.ReadLine()")) {
				readLine += n
			}
		}
	}
	// All but two External samples wait in Console.ReadLine.
	if total != 6331 || native != 2427 || readLine != 2425 {
		t.Errorf("folded total %d native %d (in ReadLine %d), want 6331, 2427, 2425", total, native, readLine)
	}
	tracetest.Golden(t, "mixed.folded", buf.Bytes())

	// With thread roots and wall time, every line starts with the thread.
	buf.Reset()
	if err := WriteFolded(&buf, p, FoldedOptions{Weight: WeightWall, Threads: true}); err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if !bytes.HasPrefix(line, []byte("thread ")) {
			t.Fatalf("line without thread root: %.100s", line)
		}
	}
}

func TestSpeedscopeGolden(t *testing.T) {
	p := buildProfile(t, tracetest.CompatPath(t, mixed), stacks.Options{})
	var buf bytes.Buffer
	if err := WriteSpeedscope(&buf, p, "mixed"); err != nil {
		t.Fatal(err)
	}
	var doc ssFile
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "https://www.speedscope.app/file-format-schema.json" || len(doc.Profiles) != 1 {
		t.Fatalf("schema %q, %d profiles", doc.Schema, len(doc.Profiles))
	}
	pr := doc.Profiles[0]
	var sum int64
	for i, s := range pr.Samples {
		sum += pr.Weights[i]
		for _, f := range s {
			if f < 0 || int(f) >= len(doc.Shared.Frames) {
				t.Fatalf("frame index %d out of range", f)
			}
		}
		// Root first: the program's Main.
		if root := doc.Shared.Frames[s[0]].Name; root != "NoNativeStacks.Program.Main(class System.String[])" {
			t.Errorf("root %q", root)
		}
	}
	if pr.Type != "sampled" || pr.Unit != "nanoseconds" || sum != pr.EndValue || len(pr.Samples) != len(pr.Weights) {
		t.Errorf("profile %s %s end %d sum %d", pr.Type, pr.Unit, pr.EndValue, sum)
	}
	// Thread time covers the sampled span (8.67 s) plus the first period.
	if want := p.DurationNanos + p.PeriodNanos; sum != want {
		t.Errorf("weights sum %d, want %d", sum, want)
	}
	tracetest.Golden(t, "mixed.speedscope.json", buf.Bytes())
}

func TestPprof(t *testing.T) {
	p := buildProfile(t, tracetest.CompatPath(t, mixed), stacks.Options{})
	var buf bytes.Buffer
	if err := WritePprof(&buf, p); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := pp.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(pp.SampleType) != 2 || pp.SampleType[0].Type != "samples" || pp.SampleType[0].Unit != "count" ||
		pp.SampleType[1].Type != "wall" || pp.SampleType[1].Unit != "nanoseconds" {
		t.Fatalf("sample types %v", pp.SampleType)
	}
	var count, wall, external int64
	for _, s := range pp.Sample {
		count += s.Value[0]
		wall += s.Value[1]
		if s.Label["kind"][0] == "external" {
			external += s.Value[0]
			if leaf := s.Location[0].Line[0].Function.Name; leaf != stacks.NativeFrame {
				t.Errorf("external leaf %q", leaf)
			}
		}
		if len(s.Label["thread"]) != 1 || len(s.NumLabel["thread_id"]) != 1 {
			t.Fatalf("labels %v %v", s.Label, s.NumLabel)
		}
	}
	if count != 6331 || external != 2427 || wall != p.DurationNanos+p.PeriodNanos {
		t.Errorf("count %d external %d wall %d", count, external, wall)
	}
	files := map[string]bool{}
	for _, f := range pp.Function {
		files[f.Filename] = true
	}
	if !files["NoNativeStacks.dll"] || !files["System.Private.CoreLib.dll"] {
		t.Errorf("module file names %v", files)
	}
}

func TestFlameGraphHTML(t *testing.T) {
	p := buildProfile(t, tracetest.CompatPath(t, mixed), stacks.Options{})
	var buf bytes.Buffer
	if err := WriteFlameGraph(&buf, p, FlameOptions{Title: "mixed <&>"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	// Self-contained: no external script, style or fetch.
	for _, bad := range []string{"<script src", "<link", "http://", "fetch(", "@import"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(page, "mixed &lt;&amp;&gt;") {
		t.Error("title not escaped")
	}
	// The embedded tree's root value is every sample.
	i := strings.Index(page, "const D=")
	j := strings.Index(page[i:], ";\n")
	var d struct {
		Frames []flameFrame      `json:"frames"`
		Root   []json.RawMessage `json:"root"`
	}
	if err := json.Unmarshal([]byte(page[i+len("const D="):i+j]), &d); err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := json.Unmarshal(d.Root[1], &total); err != nil || total != 6331 {
		t.Errorf("root value %d (%v)", total, err)
	}
	var hasNative bool
	for _, f := range d.Frames {
		hasNative = hasNative || f.Name == stacks.NativeFrame
	}
	if !hasNative {
		t.Error("no [native code] frame in the page")
	}
}

// TestPprofMixedMode: a CPU-time profile with kernel frames and GC labels
// (what package perf produces) is written with the cpu value, numeric gc
// and string gc_phase labels, and its notes as comments; the flame graph
// marks kernel frames as their own kind, apart from the thread roots.
func TestPprofMixedMode(t *testing.T) {
	p := &stacks.Profile{
		Frames: []stacks.Frame{
			{Name: "do_syscall_64", Module: "[kernel]", Kind: stacks.KindKernel},
			{Name: "memset", Module: "libc.so.6", Kind: stacks.KindNative},
			{Name: "App.Fill()", Module: "App.dll", Kind: stacks.KindManaged},
		},
		Threads: []stacks.Thread{{ID: 7, Samples: 3}},
		Samples: []stacks.Sample{
			{Thread: 0, Stack: []int32{1, 2}, Count: 2, Nanos: 20e6, Labels: []stacks.Label{{Key: "gc", Num: 12}, {Key: "gc_phase", Str: "pause"}}},
			{Thread: 0, Stack: []int32{0, 1, 2}, Count: 1, Nanos: 10e6},
		},
		PeriodNanos: 10e6, Total: 3, CPUTime: true, Lost: 4,
		Notes: []string{"kernel frames omitted: perf_event_paranoid is 2 and clrspy has no CAP_PERFMON"},
	}
	var buf bytes.Buffer
	if err := WritePprof(&buf, p); err != nil {
		t.Fatal(err)
	}
	pp, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if pp.SampleType[1].Type != "cpu" || pp.DefaultSampleType != "cpu" || pp.PeriodType.Type != "cpu" || pp.Period != 10e6 {
		t.Errorf("types %v %q %v %d", pp.SampleType, pp.DefaultSampleType, pp.PeriodType, pp.Period)
	}
	var labelled int
	for _, s := range pp.Sample {
		if g := s.NumLabel["gc"]; len(g) == 1 {
			labelled++
			if g[0] != 12 || len(s.Label["gc_phase"]) != 1 || s.Label["gc_phase"][0] != "pause" || s.Value[0] != 2 {
				t.Errorf("labelled sample %v %v %v", s.Label, s.NumLabel, s.Value)
			}
		}
	}
	if labelled != 1 {
		t.Errorf("%d labelled samples", labelled)
	}
	if len(pp.Comments) != 3 || pp.Comments[1] != "4 samples lost" || pp.Comments[2] != p.Notes[0] {
		t.Errorf("comments %q", pp.Comments)
	}
	buf.Reset()
	if err := WriteFlameGraph(&buf, p, FlameOptions{Threads: true}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if !strings.Contains(page, `{"n":"do_syscall_64","m":"[kernel]","k":4}`) || !strings.Contains(page, `{"n":"all","k":9}`) {
		t.Errorf("flame graph frames: kernel kind 4 and root kind 9 expected")
	}
}
