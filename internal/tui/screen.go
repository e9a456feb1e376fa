package tui

import (
	"cmp"
	"fmt"
	"github.com/clrspy/clrspy/triage"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
)

// Screen is what one frame shows, as data: the header's figures, the GC
// table's rows as sorted, filtered and cut to the terminal, the
// histograms, the timeline and the panels. View renders it; clrspy top
// --snapshot-every writes it as one JSON line.
type Screen struct {
	Time   time.Time `json:"time"` // wall-clock time of the latest event
	Frozen bool      `json:"frozen"`
	// State is the session's: running, stopped, exited, ended, error;
	// Message says it in words when it is not running ("process exited
	// (status 3)").
	State   string   `json:"state"`
	Message string   `json:"message,omitempty"`
	Notes   []string `json:"notes,omitempty"`

	// Findings are the process's findings above info since the session
	// began, most severe first: triage's judgement of the snapshot
	// (monitor.TriageFacts, the facts clrspy_findings counts), the
	// banner's first.
	Findings []triage.Finding `json:"findings,omitempty"`

	Pid            int    `json:"pid"`
	Name           string `json:"name"`
	RuntimeVersion string `json:"runtime_version"`
	GCFlavor       string `json:"gc_flavor"` // "server (4 heaps), concurrent"
	GCHeaps        int    `json:"gc_heaps"`
	// UptimeSec is the process's age (UptimeFromStart) or the session's.
	UptimeSec       float64     `json:"uptime_s"`
	UptimeFromStart bool        `json:"uptime_from_start"`
	AllocRate       gcpause.Opt `json:"alloc_rate_bytes_per_sec"`
	// HeapAfterBytes is each generation's size after HeapAfterGC, the
	// latest GC that reported sizes (0: none yet).
	HeapAfterGC uint32 `json:"heap_after_gc"`
	// Memory is the process's RSS split (clrspy memory's parts) and its
	// cgroup's limit, read from /proc every few seconds (nil: not read).
	Memory         *Memory   `json:"memory,omitempty"`
	HeapAfterBytes HeapSizes `json:"heap_after_bytes"`
	// GCCounts are the GCs the session saw, each under the generation it
	// collected; LastGC is the runtime's number of the latest one (its
	// count since the process started).
	GCCounts GCCounts `json:"gc_counts"`
	LastGC   uint32   `json:"last_gc"`
	// Paused is the share of time the runtime was stopped for GCs over
	// the last 1, 10 and 60 s and since the session began (window_s 0).
	Paused []Paused `json:"paused"`
	// Longest is the GC with the longest pause (nil before the first).
	Longest *Longest `json:"longest"`

	Panel  string `json:"panel"` // gcs, locks, cpu
	Sort   string `json:"sort"`  // time, pause, generation
	Filter string `json:"filter,omitempty"`
	// Rows are the GC table's rows on screen; RowsMatched counts the kept
	// rows that pass the filter (the table shows the first that fit).
	Rows        []Row `json:"rows"`
	RowsMatched int   `json:"rows_matched"`

	Histograms []GenHistogram `json:"histograms"`
	Timeline   Timeline       `json:"timeline"`

	Locks *monitor.LockSummary `json:"locks,omitempty"`
	CPU   *CPUPanel            `json:"cpu,omitempty"`
	// Exceptions is set with Options.Exceptions.
	Exceptions *monitor.ExceptionsSummary `json:"exceptions,omitempty"`
	Counters   []Counter                  `json:"counters"`
	// HasCounters: the session carries the runtime's counters.
	HasCounters bool `json:"has_counters"`

	// ThreadPool is set when the session follows the pool (--threadpool).
	ThreadPool *monitor.ThreadPoolSummary `json:"thread_pool,omitempty"`
	// Requests is set when the session follows requests (--requests).
	Requests *RequestsPanel `json:"requests,omitempty"`

	// rows before the cut to the terminal's height.
	allRows []*Row
}

// HeapSizes are sizes per generation after a GC.
type HeapSizes struct {
	Gen0 gcpause.Opt `json:"gen0"`
	Gen1 gcpause.Opt `json:"gen1"`
	Gen2 gcpause.Opt `json:"gen2"`
	LOH  gcpause.Opt `json:"loh"`
	POH  gcpause.Opt `json:"poh"`
}

// GCCounts are GCs per generation collected.
type GCCounts struct {
	Gen0       int `json:"gen0"`
	Gen1       int `json:"gen1"`
	Gen2       int `json:"gen2"`
	Total      int `json:"total"`
	Induced    int `json:"induced"`
	Incomplete int `json:"incomplete"`
}

// Paused is one window's stopped share.
type Paused struct {
	WindowSec        float64 `json:"window_s"` // 0: since the session began
	GCPausedPercent  float64 `json:"gc_paused_percent"`
	SuspendedPercent float64 `json:"suspended_percent"` // every suspension, GC or not
}

// Longest is the longest GC pause of the session.
type Longest struct {
	Number  uint32  `json:"number"`
	Gen     string  `json:"gen"`
	Reason  string  `json:"reason"`
	PauseMS float64 `json:"pause_ms"`
}

// Row is one line of the GC table: a GC, or a runtime suspension that was
// not a GC's (Kind "suspension", Generation -1).
type Row struct {
	Kind       string    `json:"kind"`
	Number     uint32    `json:"number,omitempty"`
	Time       time.Time `json:"time"`
	StartMS    float64   `json:"start_ms"` // since the session start
	Generation int       `json:"generation"`
	// Gen is clrspy gc's gen column: 0N, 2B, 1NI...; "S" for a suspension.
	Gen       string      `json:"gen"`
	Type      string      `json:"type,omitempty"`
	Reason    string      `json:"reason"`
	SuspendMS gcpause.Opt `json:"suspend_ms"`
	PauseMS   float64     `json:"pause_ms"`
	// PeakMB, AfterMB and PromotedMB are the GC row's (gcpause.GCRow):
	// the heap before and after the GC, what it promoted; unknown for a
	// suspension.
	PeakMB     gcpause.Opt `json:"peak_mb"`
	AfterMB    gcpause.Opt `json:"after_mb"`
	PromotedMB gcpause.Opt `json:"promoted_mb"`
	// Severity is the pause's level with clrspy gc's --info/--warn
	// thresholds: debug, info, warn.
	Severity    string `json:"severity"`
	SlowSuspend bool   `json:"slow_suspend,omitempty"`
	Incomplete  bool   `json:"incomplete,omitempty"`
}

// GenHistogram is one generation's pause histogram.
type GenHistogram struct {
	Generation int     `json:"generation"`
	Count      int     `json:"count"`
	MaxPauseMS float64 `json:"max_pause_ms"`
	// Pauses is gcpause's histogram of the generation's pauses.
	Pauses analysis.Histogram `json:"pauses"`
}

// Timeline is the share of time paused for GCs in each refresh period,
// oldest first, as the sparkline shows it.
type Timeline struct {
	PeriodSec       float64   `json:"period_s"`
	GCPausedPercent []float64 `json:"gc_paused_percent"`
	GCs             []int     `json:"gcs"`
}

// CPUPanel is the sample profiler's view of the last window.
type CPUPanel struct {
	WindowSec  float64             `json:"window_s"`
	Samples    int64               `json:"samples"`
	Total      int64               `json:"total_samples"`
	TopMethods []monitor.MethodRow `json:"top_methods"`
}

// Counter is one of the runtime's counters in the side panel.
type Counter struct {
	Label string `json:"label"`
	// Name is the metric (OpenTelemetry semantic-convention name, or the
	// runtime's counter name).
	Name  string      `json:"name"`
	Unit  string      `json:"unit"`
	Value gcpause.Opt `json:"value"`
	// Rate is a counter's increase per second (absent for gauges).
	Rate gcpause.Opt `json:"rate"`
	text string
}

// counterSpec says how the side panel shows one metric.
type counterSpec struct {
	label, name string
	// show: "value" (a gauge), "rate" (per second), "total" (a running
	// total), "both" (total and rate), "share" (a time counter's seconds
	// per second, as a percentage: the runtime's own % paused).
	show string
	unit string // "bytes", "s", "%", "" (a count)
}

// counterSpecs are the side panel's rows, in order (labels fit the side
// panel's 18 columns: TestCounters checks): CPU and memory, the
// thread pool, exceptions and locks, the JIT, timers and assemblies.
var counterSpecs = []counterSpec{
	{"cpu", "cpu-usage", "value", "%"},
	{"working set", "dotnet.process.memory.working_set", "value", "bytes"},
	{"GC committed", "dotnet.gc.last_collection.memory.committed_size", "value", "bytes"},
	{"% paused (runtime)", "dotnet.gc.pause.time", "share", ""},
	{"pool threads", "dotnet.thread_pool.thread.count", "value", ""},
	{"pool queue", "dotnet.thread_pool.queue.length", "value", ""},
	{"pool work items", "dotnet.thread_pool.work_item.count", "rate", ""},
	{"exceptions", "dotnet.exceptions", "both", ""},
	{"lock contentions", "dotnet.monitor.lock_contentions", "rate", ""},
	{"JIT methods", "dotnet.jit.compiled_methods", "total", ""},
	{"JIT IL", "dotnet.jit.compiled_il.size", "total", "bytes"},
	{"JIT time", "dotnet.jit.compilation.time", "total", "s"},
	{"timers", "dotnet.timer.count", "value", ""},
	{"assemblies", "dotnet.assembly.count", "value", ""},
}

// counterSum adds up every series of a metric (dotnet.exceptions has one
// per exception type).
func counterSum(r *counters.Result, name string) (val, rate gcpause.Opt, unit string) {
	val, rate = gcpause.Unknown, gcpause.Unknown
	for i := range r.Metrics {
		m := &r.Metrics[i]
		if m.Name != name {
			continue
		}
		unit = m.Unit
		val = gcpause.Opt(val.Or(0) + m.Value)
		if m.Kind == counters.KindCounter && m.HasRate {
			rate = gcpause.Opt(rate.Or(0) + m.Rate)
		}
	}
	return val, rate, unit
}

func buildCounters(r *counters.Result) []Counter {
	out := make([]Counter, 0, len(counterSpecs))
	for _, sp := range counterSpecs {
		c := Counter{Label: sp.label, Name: sp.name, Value: gcpause.Unknown, Rate: gcpause.Unknown}
		if r != nil {
			c.Value, c.Rate, c.Unit = counterSum(r, sp.name)
		}
		c.text = counterText(sp, c)
		out = append(out, c)
	}
	return out
}

func counterText(sp counterSpec, c Counter) string {
	f := func(v float64) string {
		switch sp.unit {
		case "bytes":
			return fmtBytes(v)
		case "s":
			return strconv.FormatFloat(v, 'f', 2, 64) + "s"
		case "%":
			return strconv.FormatFloat(v, 'f', 1, 64) + "%"
		}
		return fmtCount(v)
	}
	switch sp.show {
	case "share":
		if !c.Rate.Valid() {
			return "-"
		}
		return fmtPct(float64(c.Rate) * 100)
	case "rate":
		if !c.Rate.Valid() {
			return "-"
		}
		return fmtCount(float64(c.Rate)) + "/s"
	case "both":
		if !c.Value.Valid() {
			return "-"
		}
		s := f(float64(c.Value))
		if c.Rate.Valid() {
			s += " (" + fmtCount(float64(c.Rate)) + "/s)"
		}
		return s
	}
	if !c.Value.Valid() {
		return "-"
	}
	return f(float64(c.Value))
}

// buildScreen turns a snapshot (and the timeline so far) into a Screen,
// with the GC table sorted and filtered but not yet cut to the height.
func (m *Model) buildScreen(s *monitor.Snapshot, hist []sample, frozen bool) *Screen {
	sc := &Screen{
		Time: s.Time, Frozen: frozen, State: string(s.Session.State),
		Pid: s.Process.Pid, Name: s.Process.Name, RuntimeVersion: s.Process.RuntimeVersion,
		GCFlavor: flavor(s.Process.GC), GCHeaps: s.Process.GC.Heaps, UptimeSec: s.Process.UptimeSec, UptimeFromStart: s.Process.UptimeFromStart,
		AllocRate: s.GC.AllocRateBytesPerSec,
		Panel:     m.panel.String(), Sort: m.sort.String(), Filter: m.filter,
		Notes:       append([]string(nil), m.notes...),
		HasCounters: s.Counters != nil && len(s.Counters.Metrics) > 0,
		Memory:      m.mem,
	}
	if frozen && s == m.frozenSnap {
		// The frozen frame (LiveScreen's is the latest's).
		sc.Memory = m.frozenMem
	}
	sc.Message = stateMessage(s)
	g := &s.GC
	sc.GCCounts = GCCounts{Gen0: g.Gen(0).Count, Gen1: g.Gen(1).Count, Gen2: g.Gen(2).Count,
		Total: g.GCCount, Incomplete: g.Incomplete}
	for i := range gcpause.GenKeys {
		sc.GCCounts.Induced += g.Gen(i).Induced
	}
	if g.Last != nil {
		sc.LastGC = g.Last.Number
	}
	h := g.HeapSizeAfterBytes
	sc.HeapAfterBytes = HeapSizes{h[0], h[1], h[2], h[3], h[4]}
	for i := len(s.GCs) - 1; i >= 0; i-- {
		if s.GCs[i].AfterMB.Valid() {
			sc.HeapAfterGC = s.GCs[i].Number
			break
		}
	}
	for _, w := range s.Windows {
		sc.Paused = append(sc.Paused, Paused{WindowSec: w.Seconds, GCPausedPercent: w.GCPausedPercent, SuspendedPercent: w.SuspendedPercent})
	}
	if l := g.Longest; l != nil {
		sc.Longest = &Longest{Number: l.Number, Gen: l.Gen, Reason: l.Reason.String(), PauseMS: l.PauseMS}
	}
	for i := range gcpause.GenKeys {
		gen := g.Gen(i)
		sc.Histograms = append(sc.Histograms, GenHistogram{Generation: i, Count: gen.Count, MaxPauseMS: gen.MaxPauseMS,
			Pauses: g.GenPauseHistograms[i]})
	}
	sc.Timeline = timeline(hist, m.cfg.refresh())
	sc.allRows = m.rows(s)
	sc.RowsMatched = len(sc.allRows)
	if m.cfg.Locks {
		l := s.Locks
		sc.Locks = &l
	}
	if m.cfg.ThreadPool && s.ThreadPool != nil {
		tp := *s.ThreadPool
		sc.ThreadPool = &tp
	}
	if m.cfg.CPU && s.CPU != nil {
		sc.CPU = &CPUPanel{WindowSec: s.CPU.WindowSec, Samples: s.CPU.Samples, Total: s.CPU.Total, TopMethods: s.CPU.TopMethods}
	}
	if m.cfg.Exceptions && s.Exceptions != nil {
		e := *s.Exceptions
		sc.Exceptions = &e
	}
	if m.cfg.Requests {
		sc.Requests = requestsPanelOf(s.Requests)
	}
	sc.Counters = buildCounters(s.Counters)
	sc.Findings = findings(s)
	return sc
}

// findings are the snapshot's findings above info (triage's judgement).
func findings(s *monitor.Snapshot) []triage.Finding {
	f := monitor.TriageFacts(s, monitor.TriageEnv{Target: fmt.Sprintf("--pid %d", s.Process.Pid), CPUDemandPct: -1})
	var out []triage.Finding
	for _, x := range triage.Findings(f) {
		if x.Severity > triage.Info {
			out = append(out, x)
		}
	}
	return out
}

// flavor is the GC flavor with the heap count of a server GC.
func flavor(f gcpause.Flavor) string {
	s := f.String()
	if f.Kind == "server" && f.Heaps > 0 {
		s = strings.Replace(s, "server", fmt.Sprintf("server (%d heaps)", f.Heaps), 1)
	}
	return s
}

// stateMessage says how the session stands when it is not running.
func stateMessage(s *monitor.Snapshot) string {
	switch s.Session.State {
	case monitor.StateExited:
		if c := s.Session.ExitCode; c != nil {
			return fmt.Sprintf("process exited (status %d)", *c)
		}
		return "process exited"
	case monitor.StateStopped:
		return "session stopped"
	case monitor.StateEnded:
		if s.Session.Truncated {
			return "end of trace (cut short)"
		}
		return "end of trace"
	case monitor.StateError:
		return "error: " + s.Session.Error
	}
	return ""
}

// severity is the level of a pause with the configured thresholds (the
// rule of report.PauseLogOptions.Severity).
func (c *Options) severity(pauseMS float64) string {
	ns := int64(pauseMS * 1e6)
	switch {
	case ns >= int64(c.warn()):
		return "warn"
	case ns >= int64(c.info()):
		return "info"
	}
	return "debug"
}

// rows merges GCs and non-GC suspensions, filtered and sorted (pointers
// are sorted: moving the rows themselves cost a third of a frame).
func (m *Model) rows(s *monitor.Snapshot) []*Row {
	loc := m.cfg.location()
	slow := m.cfg.slowSuspend()
	out := make([]Row, 0, len(s.GCs)+len(s.Suspensions))
	for i := range s.GCs {
		g := &s.GCs[i]
		r := Row{Kind: "gc", Number: g.Number, Time: g.PauseStartUTC.In(loc), StartMS: g.PauseStartMS, Generation: g.Generation,
			Gen: g.Gen, Type: g.Type.String(), Reason: g.Reason.String(), SuspendMS: gcpause.Opt(g.SuspendMS), PauseMS: g.PauseMS,
			PeakMB: g.PeakMB, AfterMB: g.AfterMB, PromotedMB: g.PromotedMB,
			Severity: m.cfg.severity(g.PauseMS), SlowSuspend: g.SuspendMS*1e6 > float64(slow), Incomplete: !g.Complete}
		if m.match(&r) {
			out = append(out, r)
		}
	}
	for i := range s.Suspensions {
		p := &s.Suspensions[i]
		r := Row{Kind: "suspension", Time: p.StartUTC.In(loc), StartMS: p.StartMS, Generation: -1, Gen: "S",
			Reason: p.Reason.String(), SuspendMS: p.SuspendMS, PauseMS: p.PauseMS,
			PeakMB: gcpause.Unknown, AfterMB: gcpause.Unknown, PromotedMB: gcpause.Unknown,
			Severity: m.cfg.severity(p.PauseMS), SlowSuspend: p.SuspendMS.Valid() && float64(p.SuspendMS)*1e6 > float64(slow),
			Incomplete: p.Incomplete}
		if m.match(&r) {
			out = append(out, r)
		}
	}
	ptrs := make([]*Row, len(out))
	for i := range out {
		ptrs[i] = &out[i]
	}
	newer := func(a, b *Row) int {
		if a.StartMS != b.StartMS {
			return cmp.Compare(b.StartMS, a.StartMS)
		}
		return cmp.Compare(b.Number, a.Number)
	}
	slices.SortStableFunc(ptrs, func(a, b *Row) int {
		switch m.sort {
		case SortPause:
			if a.PauseMS != b.PauseMS {
				return cmp.Compare(b.PauseMS, a.PauseMS)
			}
		case SortGeneration:
			if a.Generation != b.Generation {
				return cmp.Compare(b.Generation, a.Generation)
			}
		}
		return newer(a, b)
	})
	return ptrs
}

// match applies the filter: a generation ("2", "gen2", "g2") keeps that
// generation's GCs; any other text keeps the rows whose reason, type or
// gen column contains it (case-insensitive): "induced", "background",
// "lowmemory", "debugger", "2B".
func (m *Model) match(r *Row) bool {
	f := strings.ToLower(strings.TrimSpace(m.filter))
	if f == "" {
		return true
	}
	if g, ok := filterGen(f); ok {
		return r.Kind == "gc" && r.Generation == g
	}
	return strings.Contains(strings.ToLower(r.Reason), f) || strings.Contains(strings.ToLower(r.Type), f) ||
		strings.EqualFold(r.Gen, f) || (f == "suspension" && r.Kind == "suspension")
}

func filterGen(f string) (int, bool) {
	for _, p := range []string{"gen", "g"} {
		if strings.HasPrefix(f, p) {
			f = f[len(p):]
			break
		}
	}
	if len(f) == 1 && f[0] >= '0' && f[0] <= '2' {
		return int(f[0] - '0'), true
	}
	return 0, false
}

// sample is the state at one refresh, for the timeline.
type sample struct {
	at      float64 // event clock, s since the session start
	stopped float64 // s stopped for GCs since the session start
	gcs     int
}

func sampleOf(s *monitor.Snapshot) sample {
	sm := sample{at: s.Session.ElapsedSec, gcs: s.GC.GCCount}
	for _, w := range s.Windows {
		if w.Seconds == 0 {
			sm.stopped = w.GCPausedPercent / 100 * w.CoveredSec
		}
	}
	return sm
}

// timeline turns consecutive samples into the share of each period spent
// paused, and GCs per period.
func timeline(hist []sample, period time.Duration) Timeline {
	t := Timeline{PeriodSec: period.Seconds(), GCPausedPercent: []float64{}, GCs: []int{}}
	for i := 1; i < len(hist); i++ {
		a, b := hist[i-1], hist[i]
		p := 0.0
		if dt := b.at - a.at; dt > 0 {
			p = min(max((b.stopped-a.stopped)/dt*100, 0), 100)
		}
		t.GCPausedPercent = append(t.GCPausedPercent, p)
		t.GCs = append(t.GCs, b.gcs-a.gcs)
	}
	return t
}
