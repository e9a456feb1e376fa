package web

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// fileGCRows are the GC rows of a fixture read as a file: clrspy gc
// --json's (its document's rows), in start order.
func fileGCRows(t *testing.T, name string) []gcpause.GCRow {
	t.Helper()
	st := openFixture(t, name)
	defer st.Close()
	a := gcpause.New(st.Header(), gcpause.Options{})
	if _, err := st.Run(a); err != nil {
		t.Fatal(err)
	}
	return report.NewGCDocument(report.Input{}, a.Result()).GCs
}

// byNumber is rows by GC number: the live view keeps rows in the order
// GCs complete, a file's document in start order.
func byNumber(rows []gcpause.GCRow) map[uint32]gcpause.GCRow {
	m := make(map[uint32]gcpause.GCRow, len(rows))
	for _, r := range rows {
		m[r.Number] = r
	}
	return m
}

// TestLiveModelEqualsFile: every fixture read once through the file path
// (the report page's analyses) and once through the live model (the
// monitor behind the live page and serve, fed the same events): the GC
// rows, the summary (counts, stopped time, percentiles, suspensions by
// reason), the lock table (owners and waiting stacks) and the thread-pool
// and exceptions sections are equal: the live page renders package
// gcpause's rollup and package locks', threadpool's and exceptions'
// results, as the file's page does, not second copies. The CPU flame (with
// a window covering the whole fixture) has the same call paths and
// samples, one node per method whatever its code version (the file's page
// split tier-0 and tier-1 bodies into sibling nodes of one name before),
// and the live top methods count what the file's flame counts.
func TestLiveModelEqualsFile(t *testing.T) {
	// The plain fixtures, and the background-GC ones (gzipped): a
	// background GC's heap histories inside a foreground GC's pause.
	for _, name := range append(tracetest.Fixtures(t), "gc-bgc.nettrace.gz", "gc-bgc-attach.nettrace.gz") {
		if strings.HasSuffix(name, ".truncated.nettrace") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// The CPU window covers the whole fixture (each is shorter
			// than the longest window) so that its flame is the file's.
			st := openFixture(t, name)
			t.Cleanup(func() { st.Close() })
			hub := NewStreamHub(st, StreamOptions{Interval: 20 * time.Millisecond, CPUWindow: 300 * time.Second})
			if _, err := hub.Run(); err != nil {
				t.Fatal(err)
			}
			live, off := hub.Page(), offline(t, name)
			// One row type on both paths (gcpause.GCRow): the live page's
			// rows (the monitor's OnGC) and clrspy gc --json's, compared
			// as values; each page's columns are made of its rows.
			tg := pageOf(hub.sess)
			tg.mu.Lock()
			liveRows := slices.Clone(tg.rows)
			tg.mu.Unlock()
			lr, fr := byNumber(liveRows), byNumber(fileGCRows(t, name))
			if live.GCs.Len() != len(lr) || off.GCs.Len() != len(fr) {
				t.Errorf("%d live GC rows (%d on the page), %d in the file (%d on its page)", len(lr), live.GCs.Len(), len(fr), off.GCs.Len())
			}
			if !reflect.DeepEqual(lr, fr) {
				bad := 0
				for n, want := range fr {
					if got, ok := lr[n]; (!ok || !reflect.DeepEqual(got, want)) && bad < 3 {
						bad++
						t.Errorf("GC %d:\nlive %+v\nfile %+v", n, got, want)
					}
				}
				if bad == 0 {
					t.Errorf("%d live GC rows, %d in the file", len(lr), len(fr))
				}
			}
			bad := 0
			ls, fs := live.Summary, off.Summary
			if ls == nil || fs == nil {
				t.Fatalf("summary live %v, file %v", ls != nil, fs != nil)
			}
			// One summary type on both paths (gcpause.Summary: counts,
			// stopped time, percentiles, by generation, type and reason),
			// compared as values.
			if !reflect.DeepEqual(*ls, *fs) {
				t.Errorf("summary:\nlive %+v\nfile %+v", *ls, *fs)
			}
			if got, want := lockTable(live.Locks), lockTable(off.Locks); got != want {
				t.Errorf("locks:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(live.ThreadPool), section(off.ThreadPool); got != want {
				t.Errorf("thread pool:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(live.Exceptions), section(off.Exceptions); got != want {
				t.Errorf("exceptions:\nlive %s\nfile %s", got, want)
			}
			// The header's GC flavor line ("workstation, concurrent GC, N
			// heaps"): the kind from the monitor's flavor, the heaps from
			// the rows (the page's maxOf(heaps)).
			if lg, fg := live.Run.GC+fmt.Sprint(maxHeaps(live.GCs)), off.Run.GC+fmt.Sprint(maxHeaps(off.GCs)); lg != fg {
				t.Errorf("GC flavor: live %q, file %q", lg, fg)
			}
			lf, ff := flamePaths(live.CPU), flamePaths(off.CPU)
			// One node per path: a method's code versions (tier 0, tier 1,
			// rejit) are one node in both, as the page shows names only.
			for _, f := range []struct {
				what string
				fl   *report.Flame
				n    int
			}{{"live", live.CPU, len(lf)}, {"file", off.CPU, len(ff)}} {
				if f.fl != nil && len(f.fl.NodeDepth) != f.n {
					t.Errorf("%s flame: %d nodes for %d distinct paths (a method split into siblings)", f.what, len(f.fl.NodeDepth), f.n)
				}
			}
			// The top methods (top's CPU pane) count what the file's flame
			// counts for each method.
			if cpu := hub.mon.Snapshot().CPU; cpu != nil && off.CPU != nil {
				self, total := flameMethods(off.CPU)
				bad = 0
				for _, r := range cpu.TopMethods {
					k := r.Name
					if r.Module != "" {
						k += " [" + r.Module + "]"
					}
					if (r.Self != self[k] || r.Total != total[k]) && bad < 5 {
						bad++
						t.Errorf("top method %s: live self %d total %d, file's flame %d %d", k, r.Self, r.Total, self[k], total[k])
					}
				}
				t.Logf("%d live top methods checked against the file's flame (%d samples)", len(cpu.TopMethods), off.CPU.Total)
				if len(cpu.TopMethods) == 0 {
					t.Errorf("no live top methods for %d file samples", off.CPU.Total)
				}
			}
			if len(lf) != len(ff) {
				t.Errorf("flame: %d live paths, %d in the file's", len(lf), len(ff))
			}
			bad = 0
			for p, want := range ff {
				if got := lf[p]; got != want && bad < 5 {
					bad++
					t.Errorf("flame %s: live %d samples, file %d", p, got, want)
				}
			}
		})
	}
}

func lockTable(l *report.PageLocks) string {
	if l == nil {
		return "none"
	}
	b, _ := json.Marshal(l)
	return string(b)
}

// TestLiveSectionsEqualFile: the thread-pool, exceptions and requests fixtures
// streamed to a page over the websocket (a page that subscribed before the
// stream was read, applying each section as updates replace it) end with
// the same thread-pool, exceptions and requests sections as the file's page of the
// same trace: the live page builds them from the monitor's analyses with
// the file page's functions. Each section is sent only when it changed.
// The trace is read slowly (16 KB every 5 ms, ~0.3 s) so that sections
// are sent while it grows; how many updates that makes depends on the
// machine's load, so only the end state and "never resent unchanged" are
// asserted.
func TestLiveSectionsEqualFile(t *testing.T) {
	for _, name := range []string{"threadpool.nettrace.gz", "exceptions.nettrace.gz", "requests.nettrace.gz"} {
		t.Run(name, func(t *testing.T) {
			f, err := os.Open(tracetest.Path(t, name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			z, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			st, err := source.Open(source.Spec{File: "-", Stdin: &slowReader{r: z}})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			hub := NewStreamHub(st, StreamOptions{Interval: 20 * time.Millisecond})
			srv := httptest.NewServer(Handler(hub.Monitors, Options{}))
			defer srv.Close()
			c := dial(t, srv, "1")
			first, _ := read(t, c)
			if first.Type != "snapshot" || first.Page == nil {
				t.Fatalf("first message %q", first.Type)
			}
			tp, exc, req := first.Page.ThreadPool, first.Page.Exceptions, first.Page.Requests
			done := make(chan error, 1)
			go func() { _, err := hub.Run(); done <- err }()
			var tpSent, excSent, reqSent []string
			updates := 0
			for {
				m, ok := read(t, c)
				if !ok {
					break
				}
				updates++
				if m.ThreadPool != nil {
					tp = m.ThreadPool
					tpSent = append(tpSent, section(m.ThreadPool))
				}
				if m.Exceptions != nil {
					exc = m.Exceptions
					excSent = append(excSent, section(m.Exceptions))
				}
				if m.Requests != nil {
					req = m.Requests
					reqSent = append(reqSent, section(m.Requests))
				}
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			off := offline(t, name)
			t.Logf("%d updates; the thread pool sent in %d, the exceptions in %d, the requests in %d", updates, len(tpSent), len(excSent), len(reqSent))
			if got, want := section(tp), section(off.ThreadPool); got != want {
				t.Errorf("thread pool:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(exc), section(off.Exceptions); got != want {
				t.Errorf("exceptions:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(hub.Page().ThreadPool), section(off.ThreadPool); got != want {
				t.Errorf("final page's thread pool:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(hub.Page().Exceptions), section(off.Exceptions); got != want {
				t.Errorf("final page's exceptions:\nlive %s\nfile %s", got, want)
			}
			if got, want := section(req), section(off.Requests); got != want {
				t.Errorf("requests:\nlive %s\nfile %s", got, want)
			}
			for what, sent := range map[string][]string{"thread pool": tpSent, "exceptions": excSent, "requests": reqSent} {
				for i := 1; i < len(sent); i++ {
					if sent[i] == sent[i-1] {
						t.Errorf("%s sent again unchanged (update %d of %d)", what, i+1, len(sent))
					}
				}
			}
			// What the fixtures' workloads did (testdata/traces/*.workload.json).
			switch name {
			case "threadpool.nettrace.gz":
				// starve: 16 items blocked 200 ms in Task.Wait, peak 13
				// threads by the runtime's own count.
				if off.ThreadPool == nil || off.ThreadPool.ThreadsMax != 13 || len(off.ThreadPool.Episodes) == 0 {
					t.Errorf("file page's thread pool: %s", section(off.ThreadPool))
				}
				if len(tpSent) == 0 {
					t.Error("no update carried the thread pool")
				}
			case "exceptions.nettrace.gz":
				// throws: 80 + 40 + 20 + 20 thrown, all caught.
				e := off.Exceptions
				if e == nil || e.Thrown != 160 || e.Caught != 160 || len(e.Types) != 4 || e.Types[0].Type != "System.InvalidOperationException" || e.Types[0].Count != 80 {
					t.Errorf("file page's exceptions: %s", section(e))
				}
				if len(excSent) == 0 {
					t.Error("no update carried the exceptions")
				}
			case "requests.nettrace.gz":
				// The ASP.NET Core workload under wrk: 406 requests, 20
				// hit by a GC pause, the 10 slowest for the waterfall.
				r := off.Requests
				if r == nil || r.Requests != 406 || r.HitByPause != 20 || len(r.Slowest) != 10 {
					t.Errorf("file page's requests: %s", section(r))
				}
				if len(reqSent) == 0 {
					t.Error("no update carried the requests")
				}
			}
		})
	}
}

// section is a page section as JSON ("null": none).
func section(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// slowReader reads at most 16 KB every 5 ms.
type slowReader struct{ r io.Reader }

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(5 * time.Millisecond)
	return s.r.Read(p[:min(len(p), 16<<10)])
}

// flamePaths is a flame's call tree as root-to-node paths of frame names
// ("Main;Work;Hot") and the samples through each.
func flamePaths(f *report.Flame) map[string]int64 {
	out := map[string]int64{}
	if f == nil {
		return out
	}
	// A node's total: the stacks ending in it or below it.
	total := make([]int64, len(f.NodeDepth))
	for i, n := range f.StackNode {
		if n >= 0 {
			total[n] += f.StackCount[i]
		}
	}
	for i := len(f.NodeDepth) - 1; i >= 0; i-- {
		for p := i - 1; p >= 0; p-- {
			if f.NodeDepth[p] == f.NodeDepth[i]-1 {
				total[p] += total[i]
				break
			}
		}
	}
	var path []string
	for i, d := range f.NodeDepth {
		path = append(path[:d], f.Frames[f.NodeFrame[i]])
		out[strings.Join(path, ";")] += total[i]
	}
	return out
}

// flameMethods is a flame's samples by method (name and module): those
// stopped in it (self) and those with it anywhere on the stack (total,
// once per stack however often it recurs), as a profile's top table
// counts them.
func flameMethods(f *report.Flame) (self, total map[string]int64) {
	self, total = map[string]int64{}, map[string]int64{}
	if f == nil {
		return
	}
	parent := make([]int32, len(f.NodeDepth))
	for i, d := range f.NodeDepth {
		parent[i] = -1
		for p := i - 1; p >= 0; p-- {
			if f.NodeDepth[p] == d-1 {
				parent[i] = int32(p)
				break
			}
		}
	}
	name := func(n int32) string {
		fr := f.NodeFrame[n]
		if m := f.FrameMod[fr]; m >= 0 {
			return f.Frames[fr] + " [" + f.Modules[m] + "]"
		}
		return f.Frames[fr]
	}
	for i, n := range f.StackNode {
		if n < 0 {
			continue
		}
		c := f.StackCount[i]
		self[name(n)] += c
		seen := map[string]bool{}
		for ; n >= 0; n = parent[n] {
			if k := name(n); !seen[k] {
				seen[k] = true
				total[k] += c
			}
		}
	}
	return
}

// maxHeaps is the largest heap count of a page's GC rows: what the page's
// header adds to the GC flavor.
func maxHeaps(c *report.GCColumns) int {
	n := 0
	if c != nil {
		for _, h := range c.Heaps {
			n = max(n, h)
		}
	}
	return n
}
