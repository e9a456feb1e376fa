package report

// The report page: `clrspy report` writes it as one self-contained HTML
// file (style, script and data inline; no network), and the live web view
// serves the same page, fed through a websocket. The data is one JSON
// document of compact columnar arrays (gzip-friendly, cheap to parse);
// page/page.js draws it.

import (
	"bufio"
	"embed"
	"fmt"
	"html"
	"io"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/hang"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/triage"
)

// Page is everything the report page shows.
type Page struct {
	Title string `json:"title"`
	Input Input  `json:"input"`
	// Run is what the trace says about the process (command line,
	// runtime version, GC flavor).
	Run      runinfo.Info `json:"run"`
	Pid      int          `json:"pid,omitempty"`
	StartUTC string       `json:"start_utc,omitempty"`
	// T0MS and T1MS bound the time axis: the first and last event, in ms
	// since the session start (the clock of every time below).
	T0MS float64 `json:"t0_ms"`
	T1MS float64 `json:"t1_ms"`
	// Summary is the exact rollup of every GC (the page computes the
	// same figures for a selected time range from the rows).
	Summary *gcpause.Summary `json:"summary,omitempty"`
	GCs     *GCColumns       `json:"gcs"`
	// GCReasons and SuspendReasons name the codes of the rows.
	GCReasons      map[string]string `json:"gc_reasons"`
	Suspensions    *SuspColumns      `json:"suspensions"`
	SuspendReasons map[string]string `json:"suspend_reasons"`
	// CPU is the flame graph panel's first view; Views its others (the
	// runtime's wall-clock samples next to perf's CPU samples, an
	// off-CPU view), each titled by its Flame.Label.
	CPU        *Flame          `json:"cpu,omitempty"`
	Views      []*Flame        `json:"views,omitempty"`
	Locks      *PageLocks      `json:"locks,omitempty"`
	Exceptions *PageExceptions `json:"exceptions,omitempty"`
	ThreadPool *PageThreadPool `json:"thread_pool,omitempty"`
	// Stacks is every thread as the session ended (report --stacks).
	Stacks   *PageStacks   `json:"stacks,omitempty"`
	Requests *PageRequests `json:"requests,omitempty"`
	Heap     *PageHeap     `json:"heap,omitempty"`
	// Snapshot is the heap snapshot section (the input held a heap dump).
	Snapshot *PageSnapshot `json:"snapshot,omitempty"`
	// Memory is the process's memory split over time (PageMemoryOf).
	Memory *PageMemory `json:"memory,omitempty"`
	// Findings are clrspy triage's findings over the whole stream, most
	// severe first (the page opens with them); nil: not judged.
	Findings []triage.Finding `json:"findings,omitempty"`
}

// PageParts are the results a page is built from; nil parts are left out.
type PageParts struct {
	Title string
	Input Input
	Run   runinfo.Info
	Pid   int
	Start time.Time
	// FirstNanos and LastNanos are the first and last event's times (ns
	// since the session start).
	FirstNanos, LastNanos int64

	GC *gcpause.Result
	// RetiredGCs are the rows of the GCs before GC.GCs (a bounded pause
	// analysis retired them as they ended); nil when GC.GCs has them all.
	// NewPage takes them over: the page's rows are these with GC.GCs
	// appended (a copy was 13 MB more at the report's peak on a 1 GiB
	// trace).
	RetiredGCs *GCColumns
	// CPU is the profile; Stacks the builder that made it (to name the
	// timeline's raw stacks) and Timeline when its samples happened (nil:
	// the flame graph cannot follow a time selection).
	CPU      *stacks.Profile
	Stacks   *stacks.Builder
	Timeline *stacks.Timeline
	// Views are profiles made elsewhere (the perf_event sampler's), shown
	// first in the flame graph panel, in order, each under its label;
	// the CPU profile above follows them as one more view.
	Views []FlameView
	Locks *locks.Result
	// PageLocks is the lock table already made from the result (Locks is
	// then nil).
	PageLocks *PageLocks
	Heap      *heap.Summary
	// Exceptions is the exception analysis (nil or none thrown: no
	// section).
	Exceptions *exceptions.Result
	// HeapMovement says whether the heap analysis saw survival and
	// movement events (without them survival is unknown).
	HeapMovement bool

	// Snapshot is the input's heap dump (nil: none); SnapshotError says
	// why a dump the input holds has no graph.
	Snapshot      *heapgraph.Graph
	SnapshotError string

	// PageThreadPool is the thread-pool section (nil: none).
	PageThreadPool *PageThreadPool
	// Threads is clrspy stacks' snapshot of every thread (nil: none).
	Threads *hang.Result
	// PageRequests is the requests section (nil: no request events).
	PageRequests *PageRequests
	// Findings: triage's, most severe first.
	Findings []triage.Finding
	// Memory is the memory split over time (nil: not read).
	Memory *PageMemory
}

// NewPage builds the page data.
func NewPage(pp PageParts) *Page {
	p := &Page{
		Title: pp.Title, Input: pp.Input, Run: pp.Run, Pid: pp.Pid,
		T0MS: round3(ms(pp.FirstNanos)), T1MS: round3(ms(pp.LastNanos)),
		GCs: &GCColumns{}, Suspensions: &SuspColumns{},
		GCReasons: map[string]string{}, SuspendReasons: map[string]string{},
	}
	if !pp.Start.IsZero() {
		p.StartUTC = pp.Start.UTC().Format(time.RFC3339Nano)
	}
	if res := pp.GC; res != nil {
		s := gcpause.NewSummary(res)
		p.Summary = &s
		if pp.RetiredGCs != nil && pp.RetiredGCs.Len() > 0 {
			p.GCs = pp.RetiredGCs
		}
		for _, g := range res.GCs {
			r := gcpause.NewGCRow(g)
			p.GCs.Append(&r)
		}
		for _, s := range res.Suspensions {
			p.Suspensions.Append(s)
		}
		p.AddReasons(p.GCs, p.Suspensions)
		for _, r := range res.ByReason {
			p.SuspendReasons[strconv.Itoa(int(r.Reason))] = r.Reason.String()
		}
	}
	var flames []*Flame
	for _, v := range pp.Views {
		if v.Profile != nil && v.Profile.Total > 0 {
			f := NewFlame(nil, v.Profile, nil, maxFlameBins)
			f.Label, f.Unit = v.Label, v.Unit
			flames = append(flames, f)
		}
	}
	if pp.CPU != nil && pp.CPU.Total > 0 && pp.Stacks != nil {
		f := NewFlame(pp.Stacks, pp.CPU, pp.Timeline, maxFlameBins)
		f.Label = SampleLabel(pp.CPU)
		flames = append(flames, f)
	}
	if len(flames) > 0 {
		p.CPU, p.Views = flames[0], flames[1:]
	}
	p.Findings = pp.Findings
	p.Memory = pp.Memory
	p.Locks = pp.PageLocks
	p.ThreadPool = pp.PageThreadPool
	p.Stacks = newPageStacks(pp.Threads)
	p.Requests = pp.PageRequests
	if p.Locks == nil {
		p.Locks = PageLocksOf(pp.Locks)
	}
	p.Exceptions = PageExceptionsOf(pp.Exceptions)
	if pp.Heap != nil && pp.Heap.Total.Sampled > 0 {
		p.Heap = NewPageHeap(pp.Heap, pp.HeapMovement, maxTableRows)
	}
	if pp.Snapshot != nil {
		p.addSnapshot(pp.Snapshot)
	}
	if pp.SnapshotError != "" {
		p.Input.Complete = false
		p.Input.Partial = append(slices.Clip(p.Input.Partial), pp.SnapshotError)
	}
	return p
}

// FlameView is one view of the page's flame graph panel: a profile and
// what its samples measure.
type FlameView struct {
	// Label is the panel's title for it: LabelCPU, LabelWall, or what
	// another sampler measures ("off-CPU").
	Label   string
	Profile *stacks.Profile
	// Unit is what the profile's counts are ("": samples).
	Unit string
}

// Labels of the flame graph panel's views: what their samples measure, as
// clrspy profile names pprof's sample type (cpu or wall).
const (
	// LabelCPU: samples of threads on a CPU (the perf_event sampler).
	LabelCPU = "CPU"
	// LabelWall: the runtime's sampler, which samples every managed
	// thread whether it runs or waits.
	LabelWall = "wall clock, managed threads"
)

// SampleLabel is the label of a profile's samples: LabelCPU when they
// measure CPU time, LabelWall otherwise.
func SampleLabel(p *stacks.Profile) string {
	if p.CPUTime {
		return LabelCPU
	}
	return LabelWall
}

// AddReasons names the reason codes of rows in the page's tables.
func (p *Page) AddReasons(g *GCColumns, s *SuspColumns) {
	for _, r := range g.Reason {
		p.GCReasons[strconv.Itoa(int(r))] = clrevents.GCReason(r).String()
	}
	if g.spool != nil {
		for r := range g.spool.reasons {
			p.GCReasons[strconv.Itoa(int(r))] = clrevents.GCReason(r).String()
		}
	}
	for _, r := range s.Reason {
		p.SuspendReasons[strconv.Itoa(int(r))] = clrevents.SuspendReason(r).String()
	}
}

const (
	maxFlameBins = 2000 // time bins of the flame graph's samples
	maxTableRows = 100  // rows of the lock and heap tables
)

func round3(v float64) float64 { return math.Round(v*1e3) / 1e3 }

// numCol is a column of numbers written with at most 3 decimals (ms to the
// µs, MB to the KB, percentages to 0.001); NaN is written as null.
type numCol []float64

func (c numCol) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 2+len(c)*6)
	b = append(b, '[')
	for i, v := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, v)
	}
	return append(b, ']'), nil
}

// appendNum appends one value of a numCol.
func appendNum(b []byte, v float64) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, round3(v), 'f', -1, 64)
}

// GC row flags (GCColumns.Flags).
const (
	FlagNoSuspension = 1 << iota
	FlagMissingSuspendEnd
	FlagLostEvents
	FlagInduced
)

// GCColumns are GC rows (gcpause.GCRow), one array per column, in start
// order: the page's compact form of the rows (short keys, numbers to 3
// decimals), not a row type of its own. Times are ms since the session
// start, sizes decimal MB; null is unknown.
type GCColumns struct {
	Number     []uint32  `json:"n"`
	Gen        []int     `json:"gen"`
	Type       []int     `json:"type"` // 0 blocking, 1 background, 2 foreground
	Reason     []uint32  `json:"reason"`
	Complete   []int     `json:"complete"` // 1 complete
	Start      numCol    `json:"start"`    // GCStart
	PauseStart numCol    `json:"pstart"`
	Pause      numCol    `json:"pause"`
	Suspend    numCol    `json:"susp"`
	Duration   numCol    `json:"dur"`    // GCStart → GCEnd
	PausePct   numCol    `json:"pct"`    // pause as % of the time since the previous pause ended
	Pauses     []int     `json:"npause"` // stops (more than 1 for a background GC)
	Alloc      numCol    `json:"alloc"`  // allocated in gen0 since the previous GC
	Peak       numCol    `json:"peak"`   // heap size before
	After      numCol    `json:"after"`  // heap size after
	Promoted   numCol    `json:"promo"`
	Size       [5]numCol `json:"size"` // per generation after: gen0, gen1, gen2, LOH, POH
	Surv       [4]numCol `json:"surv"` // survival % of gen0, gen1, gen2, LOH
	Frag       [4]numCol `json:"frag"` // fragmentation %
	Pinned     numCol    `json:"pinned"`
	FinSurv    numCol    `json:"fin"` // finalization-promoted MB
	Heaps      []int     `json:"heaps"`
	Flags      []int     `json:"flags"` // FlagNoSuspension | ...

	// spool holds the rows before those in the columns when a report
	// page's retired rows were spooled (page_gcspool.go): only the page's
	// JSON, Len and AddReasons read them.
	spool *gcColSpool
}

// Len is the number of rows.
func (c *GCColumns) Len() int {
	if c.spool != nil {
		return c.spool.rows + len(c.Number)
	}
	return len(c.Number)
}

// GCColumnsOf is rows as the page's columns.
func GCColumnsOf(rows []gcpause.GCRow) *GCColumns {
	c := &GCColumns{}
	for i := range rows {
		c.Append(&rows[i])
	}
	return c
}

// num is a row's value as a column's: unknown is NaN (null).
func num(o gcpause.Opt) float64 { return o.Or(math.NaN()) }

// Append adds one GC's row: the columns are gcpause.GCRow's values, one
// array per field the page draws.
func (c *GCColumns) Append(r *gcpause.GCRow) {
	c.Number = append(c.Number, r.Number)
	c.Gen = append(c.Gen, r.Generation)
	c.Type = append(c.Type, int(r.Type))
	c.Reason = append(c.Reason, uint32(r.Reason))
	complete := 0
	if r.Complete {
		complete = 1
	}
	c.Complete = append(c.Complete, complete)
	c.Start = append(c.Start, r.GCStartMS)
	c.PauseStart = append(c.PauseStart, r.PauseStartMS)
	c.Pause = append(c.Pause, r.PauseMS)
	c.Suspend = append(c.Suspend, r.SuspendMS)
	c.Duration = append(c.Duration, num(r.GCDurationMS))
	c.PausePct = append(c.PausePct, r.PausePercent)
	c.Pauses = append(c.Pauses, r.Pauses)
	c.Alloc = append(c.Alloc, num(r.Gen0AllocMB))
	c.Peak = append(c.Peak, num(r.PeakMB))
	c.After = append(c.After, num(r.AfterMB))
	c.Promoted = append(c.Promoted, num(r.PromotedMB))
	for gen := range c.Size {
		c.Size[gen] = append(c.Size[gen], num(r.GenSizeMB[gen]))
	}
	for gen := range c.Surv {
		c.Surv[gen] = append(c.Surv[gen], num(r.SurvivalPercent[gen]))
		c.Frag[gen] = append(c.Frag[gen], num(r.FragPercent[gen]))
	}
	c.Pinned = append(c.Pinned, num(r.PinnedObjects))
	c.FinSurv = append(c.FinSurv, num(r.FinalizeSurvMB))
	c.Heaps = append(c.Heaps, r.Heaps)
	flags := 0
	if r.NoSuspension {
		flags |= FlagNoSuspension
	}
	if r.MissingSuspEnd {
		flags |= FlagMissingSuspendEnd
	}
	if r.LostEvents {
		flags |= FlagLostEvents
	}
	if r.Induced {
		flags |= FlagInduced
	}
	c.Flags = append(c.Flags, flags)
}

// SuspColumns are the non-GC runtime suspensions, one array per column.
type SuspColumns struct {
	Start      numCol   `json:"start"`
	Pause      numCol   `json:"pause"`
	Suspend    numCol   `json:"susp"` // null: no SuspendEEEnd
	Reason     []uint32 `json:"reason"`
	Thread     []uint64 `json:"thread"`
	Incomplete []int    `json:"incomplete"`
}

// Len is the number of rows.
func (c *SuspColumns) Len() int { return len(c.Start) }

// Append adds one suspension.
func (c *SuspColumns) Append(s *gcpause.Suspension) {
	c.Start = append(c.Start, ms(s.StartNanos))
	c.Pause = append(c.Pause, ms(s.PauseNanos))
	susp := math.NaN()
	if s.SuspendNanos >= 0 {
		susp = ms(s.SuspendNanos)
	}
	c.Suspend = append(c.Suspend, susp)
	c.Reason = append(c.Reason, uint32(s.Reason))
	c.Thread = append(c.Thread, s.ThreadID)
	inc := 0
	if s.Incomplete {
		inc = 1
	}
	c.Incomplete = append(c.Incomplete, inc)
}

// PageLocks is the lock contention table.
type PageLocks struct {
	Contentions int64      `json:"contentions"`
	TotalMS     float64    `json:"total_ms"`
	MaxMS       float64    `json:"max_ms"`
	Waiting     int        `json:"still_waiting"`
	Locks       []PageLock `json:"locks"` // longest total wait first
	More        int        `json:"more"`  // locks left out
	// MoreWaits and MoreMS are the waits and the wait time of the locks
	// left out (folded: the locks past those that matter).
	MoreWaits int64    `json:"more_waits"`
	MoreMS    float64  `json:"more_ms"`
	Notes     []string `json:"notes,omitempty"`
}

// Lock rows on the page: the locks that matter lead, the rest fold into
// one line (a table of 44 locks, 43 with one wait, was a page of 50
// stacks). After pageLocksMin rows, a lock is shown only while the ones
// before it hold less than pageLocksShare of the wait time, and never
// more than pageLocksMax.
const (
	pageLocksMin   = 3
	pageLocksMax   = 12
	pageLocksShare = 0.95
)

// locksThatMatter is how many of r's locks (longest total wait first) a
// view shows in full: at least pageLocksMin, then while the ones before
// hold less than pageLocksShare of the wait time, at most pageLocksMax.
func locksThatMatter(r *locks.Result) int {
	var shown int64
	for i, l := range r.Locks {
		if i == pageLocksMax || i >= pageLocksMin && float64(shown) >= pageLocksShare*float64(r.Summary.TotalNs) {
			return i
		}
		shown += l.TotalNs
	}
	return len(r.Locks)
}

// PageLock is one contended lock.
type PageLock struct {
	ID          string   `json:"id"`
	Type        string   `json:"type"`
	Contentions int64    `json:"waits"`
	TotalMS     float64  `json:"total_ms"`
	MeanMS      float64  `json:"mean_ms"`
	MaxMS       float64  `json:"max_ms"`
	Waiting     int      `json:"waiting"`
	Owners      []string `json:"owners"` // "tid (name): waits, ms", busiest first
	Stack       []string `json:"stack"`  // the longest-waiting stack, leaf first
}

// pageLocks is the page's lock table, nil without contention.
// PageLocksOf is a lock result as the page's lock table (nil when there
// was no contention): the file's page and the live page alike.
func PageLocksOf(r *locks.Result) *PageLocks {
	if r == nil || r.Summary.Contentions+int64(r.Summary.Unpaired) == 0 {
		return nil
	}
	return NewPageLocks(r, maxTableRows)
}

// NewPageLocks builds the lock table (at most max locks).
func NewPageLocks(r *locks.Result, max int) *PageLocks {
	s := r.Summary
	pl := &PageLocks{Contentions: s.Contentions, TotalMS: round3(ms(s.TotalNs)), MaxMS: round3(ms(s.MaxNs)),
		Waiting: len(r.StillWaiting), Locks: []PageLock{}, Notes: r.Notes}
	shownN := min(max, locksThatMatter(r))
	for i, l := range r.Locks {
		if i == shownN {
			pl.More = len(r.Locks) - i
			var ns int64
			for _, x := range r.Locks[i:] {
				pl.MoreWaits += x.Contentions
				ns += x.TotalNs
			}
			pl.MoreMS = round3(ms(ns))
			break
		}
		row := PageLock{ID: "-", Type: l.ObjectType, Contentions: l.Contentions,
			TotalMS: round3(ms(l.TotalNs)), MeanMS: round3(ms(l.MeanNs())), MaxMS: round3(ms(l.MaxNs)), Waiting: l.Waiting,
			Owners: []string{}, Stack: []string{}}
		if l.ID != 0 {
			row.ID = fmt.Sprintf("0x%x", l.ID)
		}
		for j, o := range l.Owners {
			if j == 3 {
				break
			}
			who := "unknown"
			switch {
			case o.OSThreadID != 0 && o.Name != "":
				who = fmt.Sprintf("%d (%s)", o.OSThreadID, o.Name)
			case o.OSThreadID != 0:
				who = strconv.FormatUint(o.OSThreadID, 10)
			case o.Raw != 0:
				who = fmt.Sprintf("0x%x", o.Raw)
			}
			row.Owners = append(row.Owners, fmt.Sprintf("%s: %d, %s ms", who, o.Contentions, fmtMS(o.TotalNs)))
		}
		if len(l.Stacks) > 0 && l.Stacks[0].Stack < len(r.Stacks) {
			fr := r.Stacks[l.Stacks[0].Stack].Frames
			row.Stack = append(row.Stack, fr[:min(len(fr), 8)]...)
		}
		pl.Locks = append(pl.Locks, row)
	}
	return pl
}

// PageHeap is the heap survival table by type.
type PageHeap struct {
	// Movement is false when the trace had no survival and movement
	// events: the survival columns are then null.
	Movement bool           `json:"movement"`
	Sampled  int            `json:"sampled"`
	Types    []PageHeapType `json:"types"` // by estimated bytes allocated
	More     int            `json:"more"`
}

// PageHeapType is one type's sampled objects.
type PageHeapType struct {
	Type     string   `json:"type"`
	Sampled  int      `json:"sampled"`
	EstMB    float64  `json:"est_mb"`
	Survived *float64 `json:"survived_pct"` // survived at least one GC
	Gen2     *float64 `json:"gen2_pct"`     // reached gen2
	DiedGen2 *float64 `json:"died_gen2_pct"`
	Alive    int      `json:"alive"`
	LiveMB   float64  `json:"live_mb"`
}

// NewPageHeap builds the heap table (at most max types).
func NewPageHeap(s *heap.Summary, movement bool, max int) *PageHeap {
	ph := &PageHeap{Movement: movement, Sampled: s.Total.Sampled, Types: []PageHeapType{}}
	pct := func(v float64, g *heap.Group) *float64 {
		if !movement || g.Decided == 0 {
			return nil
		}
		r := round3(v)
		return &r
	}
	for i := range s.Types {
		if i == max {
			ph.More = len(s.Types) - max
			break
		}
		g := &s.Types[i]
		ph.Types = append(ph.Types, PageHeapType{Type: g.Key, Sampled: g.Sampled, EstMB: round3(g.EstBytes / 1e6),
			Survived: pct(g.SurvivedOnePct(), g), Gen2: pct(g.ReachedGen2Pct(), g), DiedGen2: pct(g.DiedInGen2Pct(), g),
			Alive: g.AliveAtEnd, LiveMB: round3(g.LiveBytes / 1e6)})
	}
	return ph
}

//go:embed page/page.html page/page.css page/page.js
var pageFiles embed.FS

func pageAsset(name string) string {
	b, err := pageFiles.ReadFile("page/" + name)
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return string(b)
}

// WritePage writes p as one self-contained HTML file.
func WritePage(w io.Writer, p *Page) error {
	return writePage(w, p.Title, p, false)
}

// LivePage is the data of a live page: no rows, only where its updates
// come from (paths relative to the page, so the page can be mounted under
// any prefix).
type LivePage struct {
	Live    bool   `json:"live"`
	Title   string `json:"title"`
	Socket  string `json:"socket"`  // websocket path; ?target=ID is added
	Targets string `json:"targets"` // path of the JSON target list
}

// WriteLivePage writes the live form of the page.
func WriteLivePage(w io.Writer, lp LivePage) error {
	lp.Live = true
	return writePage(w, lp.Title, &lp, true)
}

func writePage(w io.Writer, title string, data any, live bool) error {
	// The page may talk to its own server (live) and nothing else.
	connect := "'none'"
	if live {
		connect = "'self'"
	}
	// Written piece by piece: the data is the page's bulk (14 MB for a
	// 1 GiB trace), and a copy of it as a string, then in a builder, cost
	// three times that at the report's peak; the data itself is written
	// column by column.
	bw := bufio.NewWriterSize(w, 64<<10)
	tpl := pageAsset("page.html")
	for _, part := range []struct {
		mark  string
		value string
		data  bool
	}{
		{"{{CSP_CONNECT}}", connect, false},
		{"{{TITLE}}", html.EscapeString(title), false},
		{"{{CSS}}", pageAsset("page.css"), false},
		{"{{DATA}}", "", true},
		{"{{JS}}", pageAsset("page.js"), false},
	} {
		before, after, ok := strings.Cut(tpl, part.mark)
		if !ok {
			return fmt.Errorf("page template: no %s", part.mark)
		}
		bw.WriteString(before)
		if part.data {
			if err := writeJSONStream(bw, reflect.ValueOf(data), pageJSONDepth); err != nil {
				return err
			}
		} else {
			bw.WriteString(part.value)
		}
		tpl = after
	}
	bw.WriteString(tpl)
	return bw.Flush()
}

// pageJSONDepth streams the page's fields and theirs (the GC and flame
// columns); each column is marshaled alone.
const pageJSONDepth = 2

// Slice returns rows [from, to) as columns of their own (sharing the
// arrays).
func (c *SuspColumns) Slice(from, to int) *SuspColumns {
	return &SuspColumns{Start: c.Start[from:to], Pause: c.Pause[from:to], Suspend: c.Suspend[from:to],
		Reason: c.Reason[from:to], Thread: c.Thread[from:to], Incomplete: c.Incomplete[from:to]}
}

// Clone copies the columns (new arrays).
func (c *SuspColumns) Clone() *SuspColumns {
	return &SuspColumns{Start: slices.Clone(c.Start), Pause: slices.Clone(c.Pause), Suspend: slices.Clone(c.Suspend),
		Reason: slices.Clone(c.Reason), Thread: slices.Clone(c.Thread), Incomplete: slices.Clone(c.Incomplete)}
}
