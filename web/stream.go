package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// StreamOptions configure a StreamHub. Every field is optional.
type StreamOptions struct {
	// Interval is how often subscribers get an update (default 250 ms):
	// the page receives GC rows in batches, however fast GCs come.
	Interval time.Duration
	// CPUWindow is the span of the live flame graph (default 10 s), sent
	// every CPUEvery (default 2 s) while samples arrive.
	CPUWindow, CPUEvery time.Duration
	// MaxRows bounds the GC and suspension rows kept for new subscribers
	// (default 50,000 each; the oldest go first). The rollup stays exact.
	MaxRows int
}

func (o *StreamOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.CPUWindow <= 0 {
		o.CPUWindow = 10 * time.Second
	}
	if o.CPUEvery <= 0 {
		o.CPUEvery = 2 * time.Second
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 50_000
	}
}

// StreamHub runs one source.Stream through the report page's analyses
// (GC pauses, CPU samples, locks; not the heap, which keeps every sampled
// object) in process and is a Source of one target: the stream. Create it
// with NewStreamHub, serve Handler(hub, ...) and call Run.
type StreamHub struct {
	st  *source.Stream
	hdr *nettrace.Header
	o   StreamOptions
	id  string

	mu   sync.Mutex // guards everything below and the analyses
	an   *report.PageAnalyses
	rows *report.GCColumns
	susp *report.SuspColumns
	// rowBase and suspBase are the absolute numbers of the first kept rows.
	rowBase, suspBase int
	emitted           map[int]bool // GC indexes with a row (recent ones)
	first, last       int64        // event times, ns since the session start
	events, lost      uint64       // so far (the reader's own totals are read at the end)
	cpu               *report.Flame
	cpuVer            int
	cpuAt             time.Time
	cpuSamples        int64 // samples when cpu was taken
	samples           int64
	locks             *report.PageLocks
	locksVer          int
	subs              map[*subscriber]struct{}
	proc              *source.ProcWatcher // a live target's file mappings name code no event named yet
	ended             bool
	end               *Update // the last update, for late subscribers
	page              *report.Page
}

type subscriber struct {
	ch                chan Update
	rowNext, suspNext int // absolute number of the next row to send
	cpuVer, locksVer  int
	done              <-chan struct{}
}

// NewStreamHub prepares a hub for st (opened, not yet read).
func NewStreamHub(st *source.Stream, o StreamOptions) *StreamHub {
	o.defaults()
	h := &StreamHub{st: st, hdr: st.Header(), o: o, id: "1", rows: &report.GCColumns{}, susp: &report.SuspColumns{},
		emitted: map[int]bool{}, subs: map[*subscriber]struct{}{}, first: -1}
	h.an = report.NewPageAnalyses(st.Header(), report.PageAnalysesOptions{
		NoHeap: true,
		GC: gcpause.Options{
			// Called from Event, under h.mu.
			OnGC:         h.gc,
			OnSuspension: h.suspension,
			KeepGCs:      o.MaxRows, KeepSuspensions: o.MaxRows,
		},
		OnSample: func(stacks.RawSample) { h.samples++ },
	})
	return h
}

func (h *StreamHub) gc(g *gcpause.GC) {
	h.rows.Append(g)
	h.emitted[g.Index] = true
	if len(h.emitted) > 2*h.o.MaxRows {
		for i := range h.emitted {
			if i < g.Index-h.o.MaxRows {
				delete(h.emitted, i)
			}
		}
	}
	if n := h.rows.Len(); n > h.o.MaxRows {
		drop := n - h.o.MaxRows/2
		h.rows = h.rows.Slice(drop, n).Clone()
		h.rowBase += drop
	}
}

func (h *StreamHub) suspension(s *gcpause.Suspension) {
	h.susp.Append(s)
	if n := h.susp.Len(); n > h.o.MaxRows {
		drop := n - h.o.MaxRows/2
		h.susp = h.susp.Slice(drop, n).Clone()
		h.suspBase += drop
	}
}

// Analyzers are the hub's analyses, for a caller that reads the stream
// itself; Run feeds them.
func (h *StreamHub) Analyzers() []analysis.Analyzer { return h.an.Analyzers() }

// Run reads the stream to its end, feeding the analyses and sending
// updates every Interval; the last update has End set. It returns what
// the stream's end said (a cut stream is not an error).
func (h *StreamHub) Run() (source.End, error) {
	if h.st.Live() {
		h.mu.Lock()
		h.proc = source.WatchProc(h.st.Pid)
		h.mu.Unlock()
		defer h.proc.Stop()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(h.o.Interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				h.publish(false, nil)
			case <-stop:
				return
			}
		}
	}()
	as := h.an.Analyzers()
	var err error
	for {
		ev, nerr := h.st.Next()
		if nerr != nil {
			if nerr != io.EOF && !errors.Is(nerr, nettrace.ErrTruncated) {
				err = fmt.Errorf("%s: %w", h.st.Name, nerr)
			}
			break
		}
		h.mu.Lock()
		ns := h.hdr.Nanos(ev.Timestamp)
		if h.first < 0 {
			h.first = ns
		}
		h.last = max(h.last, ns)
		h.events++
		h.lost += uint64(ev.LostBefore)
		for _, a := range as {
			a.Event(ev)
		}
		h.mu.Unlock()
	}
	close(stop)
	wg.Wait()
	h.mu.Lock()
	for _, a := range as {
		if f, ok := a.(analysis.Finisher); ok {
			f.Finish()
		}
	}
	h.mu.Unlock()
	end := h.st.End()
	h.publish(true, &end)
	return end, err
}

// input describes the stream so far.
func (h *StreamHub) input(end *source.End) report.Input {
	var stats analysis.Stats
	for _, a := range h.an.Analyzers() {
		stats.Add(a.Stats())
	}
	e := source.End{Events: h.events, EventsLost: h.lost}
	if end != nil {
		e = *end
	}
	return report.NewInput(h.st, e, stats)
}

// publish sends every subscriber what it has not seen (final: the last
// update, with End set).
func (h *StreamHub) publish(final bool, end *source.End) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		return
	}
	sum := report.NewGCSummary(h.an.GC.Result())
	in := h.input(end)
	run := h.an.Run.Result()
	now := time.Now()
	if h.samples > h.cpuSamples && (final || now.Sub(h.cpuAt) >= h.o.CPUEvery) {
		h.cpu = h.flame()
		h.cpuVer++
		h.cpuAt, h.cpuSamples = now, h.samples
		if lr := h.an.Locks.Result(); lr.Summary.Contentions+int64(lr.Summary.Unpaired) > 0 {
			h.locks = report.NewPageLocks(lr, 100)
			h.locksVer++
		}
	} else if final || now.Sub(h.cpuAt) >= h.o.CPUEvery {
		h.cpuAt = now
		if lr := h.an.Locks.Result(); lr.Summary.Contentions+int64(lr.Summary.Unpaired) > 0 {
			h.locks = report.NewPageLocks(lr, 100)
			h.locksVer++
		}
	}
	if final {
		// GCs still open when the stream ended have no row yet.
		for _, g := range h.an.GC.Result().GCs {
			if !h.emitted[g.Index] {
				h.gc(g)
			}
		}
	}
	for s := range h.subs {
		u := h.delta(s, &sum, &in, &run)
		if final {
			u.End = true
			select {
			case s.ch <- u:
			case <-s.done:
			case <-time.After(2 * time.Second): // a page that stopped reading
			}
			close(s.ch)
			delete(h.subs, s)
			continue
		}
		select {
		case s.ch <- u:
			h.sent(s)
		default:
			// The page is behind: it gets these rows with the next update.
		}
	}
	if final {
		h.ended = true
		h.page = h.snapshot(in)
		u := Update{End: true, Summary: &sum, Input: &in, Run: &run, T1MS: h.t1()}
		h.end = &u
	}
}

func (h *StreamHub) t1() float64 { return float64(max(h.last, 0)) / 1e6 }

// delta is what s has not seen yet.
func (h *StreamHub) delta(s *subscriber, sum *report.GCSummary, in *report.Input, run *runinfo.Info) Update {
	u := Update{Summary: sum, Input: in, Run: run, T1MS: h.t1()}
	from := max(s.rowNext-h.rowBase, 0)
	if n := h.rows.Len(); from < n {
		u.GCs = h.rows.Slice(from, n)
		u.GCReasons = reasonNames(u.GCs, nil)
	}
	if from := max(s.suspNext-h.suspBase, 0); from < h.susp.Len() {
		u.Suspensions = h.susp.Slice(from, h.susp.Len())
		u.SuspendReasons = reasonNames(nil, u.Suspensions)
	}
	if s.cpuVer < h.cpuVer {
		u.CPU = h.cpu
	}
	if s.locksVer < h.locksVer {
		u.Locks = h.locks
	}
	return u
}

// sent advances s past what delta gave it.
func (h *StreamHub) sent(s *subscriber) {
	s.rowNext = h.rowBase + h.rows.Len()
	s.suspNext = h.suspBase + h.susp.Len()
	s.cpuVer, s.locksVer = h.cpuVer, h.locksVer
}

func reasonNames(g *report.GCColumns, s *report.SuspColumns) map[string]string {
	p := &report.Page{GCReasons: map[string]string{}, SuspendReasons: map[string]string{}}
	if g == nil {
		g = &report.GCColumns{}
	}
	if s == nil {
		s = &report.SuspColumns{}
	}
	p.AddReasons(g, s)
	if len(p.GCReasons) > 0 {
		return p.GCReasons
	}
	return p.SuspendReasons
}

// flame is the flame graph of the last CPUWindow of samples.
func (h *StreamHub) flame() *report.Flame {
	if h.proc != nil {
		h.an.Symbols.SetMappings(h.proc.Mappings())
	}
	prof := h.an.Stacks.Result()
	to := h.last + 1
	from := to - int64(h.o.CPUWindow)
	f := report.NewFlameWindow(h.an.Stacks, prof, func(yield func(int32, bool, int64)) {
		h.an.Timeline.Window(from, to, yield)
	})
	f.FromMS, f.ToMS = float64(max(from, 0))/1e6, float64(to)/1e6
	return f
}

// snapshot is the page as it stands (rows kept so far).
func (h *StreamHub) snapshot(in report.Input) *report.Page {
	p := &report.Page{
		Title: h.st.Name, Input: in, Run: h.an.Run.Result(), Pid: h.st.Pid,
		T0MS: float64(max(h.first, 0)) / 1e6, T1MS: h.t1(),
		GCs: h.rows.Slice(0, h.rows.Len()), Suspensions: h.susp.Slice(0, h.susp.Len()),
		GCReasons: map[string]string{}, SuspendReasons: map[string]string{},
		CPU: h.cpu, Locks: h.locks,
	}
	if p.Pid == 0 {
		p.Pid = h.hdr.ProcessID
	}
	if !h.hdr.SyncTimeUTC.IsZero() {
		p.StartUTC = h.hdr.SyncTimeUTC.UTC().Format(time.RFC3339Nano)
	}
	res := h.an.GC.Result()
	sum := report.NewGCSummary(res)
	p.Summary = &sum
	p.AddReasons(p.GCs, p.Suspensions)
	for _, r := range res.ByReason {
		p.SuspendReasons[strconv.Itoa(int(r.Reason))] = r.Reason.String()
	}
	return p
}

// Targets implements Source: the one stream.
func (h *StreamHub) Targets() []Target {
	h.mu.Lock()
	defer h.mu.Unlock()
	return []Target{{ID: h.id, Name: h.st.Name, Pid: h.st.Pid, Ended: h.ended}}
}

// Subscribe implements Source.
func (h *StreamHub) Subscribe(ctx context.Context, id string) (<-chan Update, error) {
	if id != h.id {
		return nil, fmt.Errorf("no target %q (this view shows target %s)", id, h.id)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.ended {
		ch := make(chan Update, 2)
		ch <- Update{Snapshot: h.page}
		ch <- *h.end
		close(ch)
		return ch, nil
	}
	s := &subscriber{ch: make(chan Update, 8), done: ctx.Done()}
	s.ch <- Update{Snapshot: h.snapshot(h.input(nil))}
	h.sent(s)
	h.subs[s] = struct{}{}
	go func() {
		<-ctx.Done()
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[s]; ok {
			delete(h.subs, s)
			close(s.ch)
		}
	}()
	return s.ch, nil
}

// Page is the final page, once Run returned (nil before).
func (h *StreamHub) Page() *report.Page {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.page
}
