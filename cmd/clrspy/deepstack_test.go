package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
)

// writeDeepStackTrace writes a trace of the sample profiler whose samples
// have stacks of depth frames (each a distinct address), plus one shallow
// sample: the input of issue 29's flame-graph crash.
func writeDeepStackTrace(t *testing.T, path string, depth, samples int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	hdr := nettrace.Header{SyncTimeUTC: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), SyncTimeQPC: 1_000_000_000,
		QPCFrequency: 1_000_000_000, PointerSize: 8, ProcessID: 4242, NumberOfProcessors: 8}
	w, err := nettrace.NewWriter(bw, hdr, nettrace.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta := &nettrace.Metadata{Provider: nettrace.ProviderSampleProfiler, EventID: 0, Level: 4, HasFields: true}
	stack := make([]uint64, depth)
	for s := 0; s < samples; s++ {
		for i := range stack {
			stack[i] = 0x7f0000000000 + uint64(i)*16 + uint64(s)
		}
		ev := nettrace.Event{Meta: meta, Timestamp: hdr.SyncTimeQPC + int64(s+1)*1_000_000, ThreadID: 7, CaptureThreadID: 7,
			Payload: []byte{2, 0, 0, 0}, Stack: stack}
		if err := w.WriteEvent(&ev); err != nil {
			t.Fatal(err)
		}
	}
	ev := nettrace.Event{Meta: meta, Timestamp: hdr.SyncTimeQPC + int64(samples+1)*1_000_000, ThreadID: 7, CaptureThreadID: 7,
		Payload: []byte{2, 0, 0, 0}, Stack: []uint64{0x7f0000000010, 0x7f0000000020}}
	if err := w.WriteEvent(&ev); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestProfileHTMLDeepStack: `profile --format html` on two samples of
// 1,000,000 frames (issue 29: a fatal stack overflow; 100 k frames took
// 161 s and 620 MB) writes a page drawing at most report.MaxFlameDepth
// frames per stack, the cut marked, in bounded time and memory. The
// command runs as a child process so its peak RSS is its own. Bounds:
// folded output of the same file takes about 0.2 s and 100 MB here; the
// 30 s and 400 MB bounds leave room for a loaded 2-core machine while
// catching the quadratic encoder (minutes) and the overflow (a crash).
func TestProfileHTMLDeepStack(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "deep.nettrace")
	const depth = 1_000_000
	writeDeepStackTrace(t, trace, depth, 2)
	out := filepath.Join(dir, "flame.html")
	cmd := exec.Command(e2eBinary(t), "profile", "--format", "html", "--threads", "1", "-o", out, trace)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		t.Fatalf("profile --format html: %v\n%s", err, tail([]byte(stderr.String())))
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss >> 10 // KiB to MiB
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d-frame stacks: %v, peak RSS %d MiB, page %d KB", depth, wall.Round(time.Millisecond), rss, len(page)>>10)
	if wall > 30*time.Second || rss > 400 {
		t.Errorf("took %v and %d MiB peak RSS, want under 30 s and 400 MiB", wall, rss)
	}
	s := string(page)
	if !strings.Contains(s, report.FlameCutName) {
		t.Errorf("the page has no %q frame", report.FlameCutName)
	}
	if want := "2 samples with stacks deeper than 1000 frames"; !strings.Contains(s, want) {
		t.Errorf("the page does not say %q:\n%s", want, s[strings.Index(s, `id="info"`):][:300])
	}
	// Nesting: the tree is [frame,value,[children]]; its depth is the
	// deepest run of "[[" openings, at most the drawn depth plus the root.
	i := strings.Index(s, `"root":`)
	if i < 0 {
		t.Fatal("no flame data in the page")
	}
	d, maxD := 0, 0
	for _, c := range s[i:] {
		switch c {
		case '[':
			d++
			maxD = max(maxD, d)
		case ']':
			d--
		}
		if d == 0 && c == ']' {
			break
		}
	}
	// Each node opens two brackets (itself and its child list).
	if nodes := maxD / 2; nodes > report.MaxFlameDepth+1 || nodes < report.MaxFlameDepth {
		t.Errorf("the page's tree is %d nodes deep, want %d (the drawn depth and the root)", nodes, report.MaxFlameDepth+1)
	}
}
