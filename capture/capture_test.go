package capture

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/memory"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
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
