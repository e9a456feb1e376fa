package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/triage"
)

// TestUsePerf: the sampler's choice where the answer needs no kernel:
// eventpipe asked, and a process outside clrspy's pid namespace (perf
// asked, or off-CPU time, refused; auto falls back with its reason).
func TestUsePerf(t *testing.T) {
	for _, tc := range []struct {
		sampler  string
		offCPU   bool
		why, err string
	}{
		{"eventpipe", false, "", ""},
		{"eventpipe", true, "", ""},
		{"auto", false, "the process is not in clrspy's pid namespace", ""},
		{"auto", true, "", "the perf sampler needs the process in clrspy's pid namespace"},
		{"perf", false, "", "the perf sampler needs the process in clrspy's pid namespace"},
	} {
		use, why, err := UsePerf(tc.sampler, 0, perf.Options{OffCPU: tc.offCPU})
		if use || errText(why) != tc.why || errText(err) != tc.err {
			t.Errorf("UsePerf(%s, pid 0, off_cpu %v) = %v, why %q, err %q; want false, %q, %q", tc.sampler, tc.offCPU, use, errText(why), errText(err), tc.why, tc.err)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestWindowRing: a window whose periodic readings are someone else's
// (serve's memory watch) judges its first reading, the ring's readings
// after it (not those before) and one at its end; it reads this process.
func TestWindowRing(t *testing.T) {
	epoch := time.Now().Add(-time.Hour)
	at := func(d time.Duration) memory.Sample {
		return memory.Sample{AtNs: int64(time.Since(epoch) + d), Split: memory.Split{Rss: 1 << 20}}
	}
	before := at(-time.Minute)
	w := StartWindow(WindowOptions{Pid: os.Getpid(), SplitPid: os.Getpid(), Epoch: epoch,
		Ring: func() []memory.Sample { return []memory.Sample{before, at(time.Second), at(2 * time.Second)} }})
	set := analysis.NewSet()
	a := triage.Register(set, triage.Options{})
	set.Start(&nettrace.Header{PointerSize: 8})
	f := w.End(a, func(uint64) string { return "worker" })
	if f == nil || f.Samples != 4 {
		t.Fatalf("split facts %+v, want 4 samples (the first, two of the ring, the last)", f)
	}
	if f.RSSFirstMB < 1 || f.RSSLastMB < 1 {
		t.Errorf("RSS first %.1f MB, last %.1f MB: this process's readings, at least 1 MB", f.RSSFirstMB, f.RSSLastMB)
	}
	if c := a.Facts().CPU; c.Cores != runtime.NumCPU() {
		t.Errorf("cores %d, want the machine's %d", c.Cores, runtime.NumCPU())
	}
	// No memory to read: no facts.
	w = StartWindow(WindowOptions{})
	if f := w.End(a, nil); f != nil {
		t.Errorf("a window without SplitPid judged %+v", f)
	}
}

// TestTeeSealsAtTargetDeath: the copy of a stream is every byte read
// (here a trace cut mid-block); a target that died there ends the copy
// after its last complete block with the end marker, so the copy reads
// as complete; an aborted copy leaves neither the file nor a partial.
func TestTeeSealsAtTargetDeath(t *testing.T) {
	src := filepath.Join("..", "testdata", "traces", "gc-wks.truncated.nettrace")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "copy.nettrace")
	spec := source.Spec{File: "-", Stdin: bytes.NewReader(data)}
	tee, err := NewTee(&spec, out, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tee.Abort()
	st, err := source.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	end, _ := st.Run()
	if _, err := tee.Drain(st); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if end.Truncated == nil || end.Truncated.Offset <= 0 || end.Truncated.Offset >= int64(len(data)) {
		t.Fatalf("end %+v: want the trace's cut", end)
	}
	end.TargetExited = true
	if err := tee.Close(end); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clip(data[:end.Truncated.Offset]), nettrace.EndOfStreamV4...)
	if !bytes.Equal(got, want) {
		t.Fatalf("copy: %d bytes, want the %d before the cut and the end marker (%d)", len(got), end.Truncated.Offset, len(want))
	}
	st, err = source.Open(source.Spec{File: out})
	if err != nil {
		t.Fatal(err)
	}
	again, err := st.Run()
	st.Close()
	// The events of the block the cut is in are not in the copy: 393 of
	// the 464 the cut stream delivered.
	if err != nil || again.Truncated != nil || again.Events != 393 || end.Events != 464 {
		t.Errorf("the sealed copy: %+v, %v; want 393 events of the cut stream's 464 (%d), complete", again, err, end.Events)
	}

	aborted := filepath.Join(dir, "aborted.nettrace")
	spec = source.Spec{File: "-", Stdin: bytes.NewReader(data)}
	tee, err = NewTee(&spec, aborted, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	tee.Abort()
	if m, _ := filepath.Glob(filepath.Join(dir, "aborted*")); len(m) != 0 {
		t.Errorf("an aborted copy left %v", m)
	}
}
