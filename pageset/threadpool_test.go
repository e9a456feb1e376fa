package pageset

import (
	"compress/gzip"
	"io"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
)

// TestPageThreadPool: the report page of the starve fixture has the
// thread-pool section (peak 13 threads, 13 cooperative-blocking
// injections, one episode, the blocking site); pages of traces without
// thread-pool events have none.
func TestPageThreadPool(t *testing.T) {
	r := tracetest.OpenFile(t, tracetest.Path(t, "threadpool.nettrace.gz"), func(in io.Reader) (*nettrace.Reader, error) {
		z, err := gzip.NewReader(in)
		if err != nil {
			return nil, err
		}
		return nettrace.NewReader(z)
	})
	a, p := pageOf(t, r)
	tp := p.ThreadPool
	if tp == nil {
		t.Fatal("no thread-pool section")
	}
	if tp.ThreadsMax != 13 || tp.Injections != 13 || tp.ByReason["cooperative_blocking"] != 13 || len(tp.Episodes) != 1 ||
		len(tp.Sites) != 1 || tp.Sites[0].Site != "Workload.Starve.Block" || !tp.Sites[0].SyncOverAsync || tp.Sites[0].Waits != 18 {
		t.Errorf("section %+v", tp)
	}
	// The episode is on the page's clock (ms since the session start),
	// inside the trace's 1.786 s.
	first := float64(a.ThreadPool.FirstNanos()) / 1e6
	if e := tp.Episodes[0]; e.StartMs < first || e.EndMs > first+1786 || e.EndMs-e.StartMs < 100 {
		t.Errorf("episode %+v, first event at %.3f ms", e, first)
	}

	r2 := tracetest.Open(t, "gc-wks.nettrace", nettrace.NewReader)
	if _, p := pageOf(t, r2); p.ThreadPool != nil {
		t.Errorf("gc-wks: section %+v", p.ThreadPool)
	}
}

// pageOf feeds the page's analyses (without the heap's) every event of r
// and returns them with their page.
func pageOf(t *testing.T, r *nettrace.Reader) (*Analyses, *report.Page) {
	t.Helper()
	a := New(r.Header(), Options{NoHeap: true})
	if err := tracetest.ReadAll(t, r, a.set.Event); err != nil {
		t.Fatal(err)
	}
	return a, report.NewPage(a.Parts())
}
