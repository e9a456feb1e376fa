package web

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/pageset"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// message is what the page receives.
type message struct {
	Type    string            `json:"type"`
	Page    *report.Page      `json:"page"`
	GCs     *columns          `json:"gcs"`
	Summary *gcpause.Summary  `json:"summary"`
	Input   *report.Input     `json:"input"`
	CPU     *report.Flame     `json:"cpu"`
	Locks   *report.PageLocks `json:"locks"`
	T1MS    float64           `json:"t1_ms"`

	ThreadPool *report.PageThreadPool `json:"thread_pool"`
	Exceptions *report.PageExceptions `json:"exceptions"`
	Requests   *report.PageRequests   `json:"requests"`
}

type columns struct {
	N []uint32 `json:"n"`
}

// hubOver serves a hub over a trace file; Run starts when the first page
// has subscribed (start), so that page sees the stream grow.
func hubOver(t *testing.T, name string) (*StreamHub, *httptest.Server) {
	t.Helper()
	st := openFixture(t, name)
	t.Cleanup(func() { st.Close() })
	hub := NewStreamHub(st, StreamOptions{Interval: 20 * time.Millisecond})
	srv := httptest.NewServer(Handler(hub.Monitors, Options{}))
	t.Cleanup(srv.Close)
	return hub, srv
}

// openFixture opens testdata/traces/NAME; a .gz fixture is read through
// gzip as standard input (source reads plain traces only).
func openFixture(t *testing.T, name string) *source.Stream {
	t.Helper()
	spec := source.Spec{File: tracetest.Path(t, name)}
	if strings.HasSuffix(name, ".gz") {
		f, err := os.Open(spec.File)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		spec = source.Spec{File: "-", Stdin: z}
	}
	st, err := source.Open(spec)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func dial(t *testing.T, srv *httptest.Server, target string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws?target="+target, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return c
}

func read(t *testing.T, c *websocket.Conn) (message, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		if websocket.CloseStatus(err) == websocket.StatusNormalClosure {
			return message{}, false
		}
		t.Fatal(err)
	}
	var m message
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m, true
}

// A page that subscribes before the stream is read sees every GC of the
// trace exactly once, in snapshot and updates, and the last update's
// rollup is the offline report's (clrspy gc on the same file).
func TestStreamHubOverWebsocket(t *testing.T) {
	hub, srv := hubOver(t, "composite.nettrace")
	c := dial(t, srv, "1")
	first, _ := read(t, c)
	if first.Type != "snapshot" || first.Page == nil || first.Page.GCs.Len() != 0 {
		t.Fatalf("first message %q, page %v", first.Type, first.Page != nil)
	}
	done := make(chan error, 1)
	go func() { _, err := hub.Run(); done <- err }()
	seen := map[uint32]int{}
	var last message
	updates, cpu := 0, 0
	var lastCPU *report.Flame
	for {
		m, ok := read(t, c)
		if !ok {
			break
		}
		updates++
		if m.GCs != nil {
			for _, n := range m.GCs.N {
				seen[n]++
			}
		}
		if m.CPU != nil {
			cpu++
			lastCPU = m.CPU
		}
		last = m
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last.Type != "end" || last.Summary == nil || last.Input == nil {
		t.Fatalf("last message %q", last.Type)
	}
	// 175 GCs, numbered 1–175 (testdata/traces/README.md).
	if len(seen) != 175 {
		t.Errorf("%d distinct GCs over %d updates", len(seen), updates)
	}
	for n := uint32(1); n <= 175; n++ {
		if seen[n] != 1 {
			t.Errorf("GC %d sent %d times", n, seen[n])
		}
	}
	// The monitor's rollup against the offline page's on the same file:
	// the same counts and longest pauses; percentiles interpolated in the
	// monitor's 1-2-5 histogram buckets, so within a bucket's width.
	off := offline(t, "composite.nettrace")
	ls, ofs := last.Summary, off.Summary
	if ls.GCCount != ofs.GCCount || ls.Incomplete != ofs.Incomplete || fmt.Sprint(ls.ByType) != fmt.Sprint(ofs.ByType) {
		t.Errorf("live %d GCs (%d incomplete) by type %v; offline %d (%d) %v", ls.GCCount, ls.Incomplete, ls.ByType, ofs.GCCount, ofs.Incomplete, ofs.ByType)
	}
	for g, want := range ofs.ByGeneration {
		got := ls.ByGeneration[g]
		if got.Count != want.Count || got.Induced != want.Induced || math.Abs(got.MaxPauseMS-want.MaxPauseMS) > 0.001 {
			t.Errorf("%s: live %+v, offline %+v", g, got, want)
		}
		if want.Count > 0 && (got.P99MS < want.P99MS/2.5 || got.P99MS > want.P99MS*2.5) {
			t.Errorf("%s: live p99 %.3f ms, offline %.3f", g, got.P99MS, want.P99MS)
		}
	}
	// The runtime suspensions by reason, GC ones included, as the file's
	// page has them (the live panel was empty: the monitor kept a copy
	// that left GC suspensions out).
	if got, want := ls.SuspensionsByReason, ofs.SuspensionsByReason; !slices.Equal(got, want) || len(want) < 2 {
		t.Errorf("suspensions by reason:\nlive    %+v\noffline %+v", got, want)
	}
	if !last.Input.Complete || last.Input.Events != off.Input.Events {
		t.Errorf("input %+v, offline %+v", last.Input, off.Input)
	}
	if cpu == 0 {
		t.Fatal("no flame graph sent")
	}
	// The trace is shorter than the CPU window: the last live flame is
	// package stacks' profile of every sample, drawn by report.NewFlame
	// as the file's page draws its own, sent again at the end once the
	// rundown named frames of samples sent before it: the same stacks with
	// the same samples (the file's page keeps a method's code versions
	// apart, the live window one node per method: stacks compare by
	// frame names).
	if got, want := flameTree(lastCPU), flameTree(off.CPU); got != want || off.CPU.Total == 0 {
		t.Errorf("live flame:\n%.2000s\nthe file's:\n%.2000s", got, want)
	}
	// A page that comes after the end gets the final page and the end.
	c2 := dial(t, srv, "1")
	snap, _ := read(t, c2)
	end, _ := read(t, c2)
	if snap.Type != "snapshot" || snap.Page.GCs.Len() != 175 || end.Type != "end" {
		t.Errorf("late page: %q with %d GCs, then %q", snap.Type, snap.Page.GCs.Len(), end.Type)
	}
	if _, ok := read(t, c2); ok {
		t.Error("the socket stays open after the end")
	}
}

// flameTree is a flame's stacks, each its frames from the root (name,
// module, kind) with its samples (stacks of the same frame names
// summed), sorted, and the total: what the flame shows, whatever the order
// of equal-weight siblings.
func flameTree(f *report.Flame) string {
	var path []string
	byPath := map[string]int64{}
	node := 0
	for si, n := range f.StackNode {
		for ; node <= int(n); node++ {
			fr := f.NodeFrame[node]
			mod := ""
			if m := f.FrameMod[fr]; m >= 0 {
				mod = f.Modules[m]
			}
			path = append(path[:f.NodeDepth[node]], fmt.Sprintf("%s %s %d", f.Frames[fr], mod, f.FrameKind[fr]))
		}
		p := ""
		if n >= 0 {
			p = strings.Join(path[:f.NodeDepth[n]+1], " < ")
		}
		byPath[p] += f.StackCount[si]
	}
	var stacks []string
	for p, n := range byPath {
		stacks = append(stacks, fmt.Sprintf("%s = %d", p, n))
	}
	sort.Strings(stacks)
	return fmt.Sprintf("total %d\n%s", f.Total, strings.Join(stacks, "\n"))
}

func offline(t *testing.T, name string) *report.Page {
	t.Helper()
	st := openFixture(t, name)
	defer st.Close()
	an := pageset.New(st.Header(), pageset.Options{NoHeap: true})
	end, err := st.Run(an.Analyzers()...)
	if err != nil {
		t.Fatal(err)
	}
	pp := an.Parts()
	pp.Input = report.NewInput(st.Name, st.Live(), end, analysisStats(an))
	return report.NewPage(pp)
}

func TestHandlerRoutes(t *testing.T) {
	_, srv := hubOver(t, "gc-wks.nettrace")
	get := func(path string) (int, string, string) {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), b.String()
	}
	code, ctype, body := get("/")
	if code != 200 || !strings.HasPrefix(ctype, "text/html") || !strings.Contains(body, `"live":true`) || !strings.Contains(body, "connect-src 'self'") {
		t.Errorf("page: %d %s, %d bytes", code, ctype, len(body))
	}
	code, _, body = get("/targets.json")
	var ts []Target
	if err := json.Unmarshal([]byte(body), &ts); code != 200 || err != nil || len(ts) != 1 || ts[0].ID != "1" || !strings.HasSuffix(ts[0].Name, "gc-wks.nettrace") {
		t.Errorf("targets: %d %v %s", code, err, body)
	}
	if code, _, _ = get("/ws"); code != http.StatusBadRequest {
		t.Errorf("ws without target: %d", code)
	}
	if code, _, _ = get("/nothing"); code != http.StatusNotFound {
		t.Errorf("unknown path: %d", code)
	}
	// An unknown target: the socket opens and closes with the reason.
	c := dial(t, srv, "7")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, err := c.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusPolicyViolation || !strings.Contains(err.Error(), `no target`) {
		t.Errorf("unknown target: %v", err)
	}
}

func analysisStats(an *pageset.Analyses) analysis.Stats {
	var s analysis.Stats
	for _, a := range an.Analyzers() {
		s.Add(a.Stats())
	}
	return s
}
