package report

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/threadpool"
)

// ThreadPoolDocument is the `clrspy threadpool --json` document. Times are
// milliseconds since the session's first event (and UTC where named so).
type ThreadPoolDocument struct {
	Input
	ThreadsMax int `json:"threads_max"`
	// QueueMax is the longest queue the runtime's counter read; null
	// without the counter.
	QueueMax           *float64         `json:"queue_max"`
	MinWorkerThreads   int              `json:"min_worker_threads"`
	MaxWorkerThreads   int              `json:"max_worker_threads"`
	Injections         int              `json:"injections"`
	InjectionsByReason map[string]int   `json:"injections_by_reason"`
	BlockedMs          float64          `json:"blocked_ms"`
	Waits              int64            `json:"waits"`
	BlockingSource     string           `json:"blocking_source"`
	Starvation         []StarvationJSON `json:"starvation"`
	// BriefEpisodes counts episodes that ended within 100 ms (not listed).
	BriefEpisodes int                   `json:"brief_episodes"`
	BlockingSites []BlockingSiteJSON    `json:"blocking_sites"`
	Adjustments   []AdjustmentJSON      `json:"adjustments"`
	Timeline      []ThreadPoolPointJSON `json:"timeline"`
	Notes         []string              `json:"notes"`
}

// StarvationJSON is one starvation episode.
type StarvationJSON struct {
	StartUTC      string   `json:"start_utc"`
	EndUTC        string   `json:"end_utc"`
	StartMs       float64  `json:"start_ms"`
	EndMs         float64  `json:"end_ms"`
	DurationMs    float64  `json:"duration_ms"`
	Ended         bool     `json:"ended"`
	Trigger       string   `json:"trigger"`
	EndedBy       string   `json:"ended_by"`
	ThreadsBefore int      `json:"threads_before"`
	ThreadsAfter  int      `json:"threads_after"`
	ThreadsMax    int      `json:"threads_max"`
	Injections    int      `json:"injections"`
	QueueMax      *float64 `json:"queue_max"`
}

// BlockingSiteJSON is one blocking site; Stack is leaf first.
type BlockingSiteJSON struct {
	Site          string   `json:"site"`
	Calls         string   `json:"calls"`
	Stack         []string `json:"stack"`
	BlockedMs     float64  `json:"blocked_ms"`
	Waits         int64    `json:"waits"`
	SyncOverAsync bool     `json:"sync_over_async"`
	Source        string   `json:"source"`
}

// AdjustmentJSON is one change of the pool's target thread count.
type AdjustmentJSON struct {
	AtMs              float64 `json:"at_ms"`
	From              int     `json:"from"`
	To                int     `json:"to"`
	Reason            string  `json:"reason"`
	AverageThroughput float64 `json:"average_throughput"`
}

// ThreadPoolPointJSON is one second of the timeline; null: unknown.
type ThreadPoolPointJSON struct {
	Second        int      `json:"second"`
	Threads       *int     `json:"threads"`
	Queue         *float64 `json:"queue"`
	Throughput    *float64 `json:"throughput"`
	CompletedPerS *float64 `json:"completed_per_s"`
	Injections    int      `json:"injections"`
}

func tpOpt(v float64) *float64 {
	if v < 0 {
		return nil
	}
	return &v
}

// NewThreadPoolDocument builds the JSON document; start is the wall time of
// the session's first event.
func NewThreadPoolDocument(in Input, r *threadpool.Result, start time.Time) *ThreadPoolDocument {
	s := &r.Summary
	d := &ThreadPoolDocument{Input: in, ThreadsMax: s.ThreadsMax, MinWorkerThreads: s.MinWorkers, MaxWorkerThreads: s.MaxWorkers,
		Injections: s.Injections, InjectionsByReason: r.InjectionsByReason, BlockedMs: ms(s.BlockedNs), Waits: s.Waits,
		BlockingSource: s.Source, BriefEpisodes: s.BriefEpisodes, Starvation: []StarvationJSON{}, BlockingSites: []BlockingSiteJSON{},
		Adjustments: []AdjustmentJSON{}, Timeline: []ThreadPoolPointJSON{}, Notes: slices.Clone(r.Notes)}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	if s.HasQueue {
		q := s.QueueMax
		d.QueueMax = &q
	}
	for _, e := range r.Episodes {
		d.Starvation = append(d.Starvation, StarvationJSON{
			StartUTC: tpUTC(start, e.StartNs), EndUTC: tpUTC(start, e.EndNs), StartMs: ms(e.StartNs), EndMs: ms(e.EndNs),
			DurationMs: ms(e.DurationNs()), Ended: e.Ended, Trigger: e.Trigger, EndedBy: e.EndedBy,
			ThreadsBefore: e.ThreadsBefore, ThreadsAfter: e.ThreadsAfter, ThreadsMax: e.ThreadsMax,
			Injections: e.Injections, QueueMax: tpOpt(e.QueueMax),
		})
	}
	for _, st := range r.Sites {
		d.BlockingSites = append(d.BlockingSites, BlockingSiteJSON{Site: st.Site, Calls: st.Calls,
			Stack: tpStrings(r.Stacks[st.Stack].Frames), BlockedMs: ms(st.BlockedNs), Waits: st.Waits,
			SyncOverAsync: st.SyncOverAsync, Source: st.Kind})
	}
	for _, a := range r.Adjustments {
		d.Adjustments = append(d.Adjustments, AdjustmentJSON{AtMs: ms(a.AtNs), From: a.From, To: a.To, Reason: a.Reason,
			AverageThroughput: a.AverageThroughput})
	}
	for _, p := range r.Timeline {
		j := ThreadPoolPointJSON{Second: p.Second, Queue: tpOpt(p.Queue), Throughput: tpOpt(p.Throughput),
			CompletedPerS: tpOpt(p.Completed), Injections: p.Injections}
		if p.Threads >= 0 {
			n := p.Threads
			j.Threads = &n
		}
		d.Timeline = append(d.Timeline, j)
	}
	return d
}

func tpStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func tpUTC(start time.Time, ns int64) string {
	return start.Add(time.Duration(ns)).UTC().Format("2006-01-02T15:04:05.000Z")
}

// WriteThreadPoolJSON writes the document, indented.
func WriteThreadPoolJSON(w io.Writer, d *ThreadPoolDocument) error {
	return writeJSON(w, d, true)
}

// WriteThreadPoolText writes the text report.
func WriteThreadPoolText(w io.Writer, in Input, r *threadpool.Result, start time.Time) error {
	ew := &lockErrWriter{w: w}
	s := &r.Summary
	if l := in.PartialLine(); l != "" {
		fmt.Fprintln(ew, l)
	}
	fmt.Fprintf(ew, "Thread pool in %s (%s)\n", in.Source, time.Duration(s.SpanNs).Round(time.Millisecond))
	q := "unknown (no queue-length counter)"
	if s.HasQueue {
		q = fmt.Sprintf("%.0f", s.QueueMax)
	}
	fmt.Fprintf(ew, "  worker threads: at most %d", s.ThreadsMax)
	if s.MaxWorkers > 0 {
		fmt.Fprintf(ew, " (min %d, max %d)", s.MinWorkers, s.MaxWorkers)
	}
	fmt.Fprintf(ew, "; queue at most %s; %d started, %d exited\n", q, s.WorkerStarts, s.WorkerStops)
	fmt.Fprintf(ew, "  %d adjustments, %d injections", s.Adjustments, s.Injections)
	if len(r.InjectionsByReason) > 0 {
		keys := slices.Sorted(maps.Keys(r.InjectionsByReason))
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s %d", k, r.InjectionsByReason[k]))
		}
		fmt.Fprintf(ew, " (%s)", strings.Join(parts, ", "))
	}
	fmt.Fprintln(ew)

	fmt.Fprintf(ew, "\nStarvation: %d episode(s)", s.Episodes)
	if s.BriefEpisodes > 0 {
		fmt.Fprintf(ew, " (and %d shorter than 100 ms, not listed)", s.BriefEpisodes)
	}
	fmt.Fprintln(ew)
	if len(r.Episodes) > 0 {
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "START (UTC)\tAT\tDURATION\tTHREADS\tINJECTIONS\tQUEUE MAX\tTRIGGER\tENDED BY")
		for _, e := range r.Episodes {
			qm := "-"
			if e.QueueMax >= 0 {
				qm = fmt.Sprintf("%.0f", e.QueueMax)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d → %d\t%d\t%s\t%s\t%s\n", tpUTC(start, e.StartNs)[11:], lockDur(e.StartNs), lockDur(e.DurationNs()),
				e.ThreadsBefore, e.ThreadsAfter, e.Injections, qm, e.Trigger, e.EndedBy)
		}
		tw.Flush()
	}

	src := s.Source
	if src == "" {
		src = "none"
	}
	whose := "pool threads"
	if s.AllThreads {
		whose = "all threads (none on a pool thread)"
	}
	fmt.Fprintf(ew, "\nBlocking sites of %s (source: %s): %s blocked in %d waits\n", whose, src, lockDur(s.BlockedNs), s.Waits)
	if len(r.Sites) > 0 {
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "BLOCKED\tWAITS\tSITE\tCALLS\t")
		for _, st := range r.Sites {
			site := st.Site
			if st.SyncOverAsync {
				site += "  [sync-over-async]"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t\n", lockDur(st.BlockedNs), st.Waits, site, st.Calls)
		}
		tw.Flush()
		top := r.Sites[0]
		if fs := r.Stacks[top.Stack].Frames; len(fs) > 0 {
			fmt.Fprintf(ew, "\n  stack of %s:\n", top.Site)
			for _, f := range fs {
				fmt.Fprintf(ew, "    %s\n", f)
			}
		}
	}

	if len(r.Timeline) > 0 {
		fmt.Fprintln(ew, "\nTimeline (per second)")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "SECOND\tTHREADS\tQUEUE\tCOMPLETED/S\tTHROUGHPUT\tINJECTIONS\t")
		dash := func(v float64) string {
			if v < 0 {
				return "-"
			}
			return fmt.Sprintf("%.0f", v)
		}
		for _, p := range r.Timeline {
			th := "-"
			if p.Threads >= 0 {
				th = fmt.Sprint(p.Threads)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t\n", p.Second, th, dash(p.Queue), dash(p.Completed), dash(p.Throughput), p.Injections)
		}
		tw.Flush()
	}
	if len(r.Adjustments) > 0 {
		fmt.Fprintln(ew, "\nInjections")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "AT\tTHREADS\tREASON\t")
		for _, a := range r.Adjustments {
			if a.To > a.From {
				fmt.Fprintf(tw, "%s\t%d → %d\t%s\t\n", lockDur(a.AtNs), a.From, a.To, a.Reason)
			}
		}
		tw.Flush()
	}
	for _, n := range r.Notes {
		fmt.Fprintf(ew, "\nnote: %s", n)
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(ew)
	}
	return ew.err
}

// ThreadPoolProfile is a pprof profile of the pool threads' blocked time
// by stack: sample types waits/count and blocked/nanoseconds.
// comments go into the profile's comments (the partial-input lines, notes).
func ThreadPoolProfile(r *threadpool.Result, start time.Time, span time.Duration, comments []string) *profile.Profile {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "waits", Unit: "count"}, {Type: "blocked", Unit: "nanoseconds"}},
		DefaultSampleType: "blocked",
		PeriodType:        &profile.ValueType{Type: "waits", Unit: "count"},
		Period:            1,
		TimeNanos:         start.UnixNano(),
		DurationNanos:     int64(span),
	}
	p.Comments = append(p.Comments, comments...)
	pl := newPprofLocs(p)
	location := func(name, mod string) *profile.Location { return pl.location(0, name, mod) }
	for _, b := range r.Blocked {
		st := r.Stacks[b.Stack]
		var sl []*profile.Location
		for i, f := range st.Frames {
			mod := ""
			if i < len(st.Modules) {
				mod = st.Modules[i]
			}
			sl = append(sl, location(f, mod))
		}
		if len(sl) == 0 {
			sl = append(sl, location("[no stack]", ""))
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: sl, Value: []int64{b.Waits, b.BlockedNs},
			Label: map[string][]string{"source": {b.Kind}}})
	}
	return p
}

// WriteThreadPoolPprof writes the blocked-time profile as gzipped
// protobuf, commented with in's partial-input lines and r's notes.
func WriteThreadPoolPprof(w io.Writer, in Input, r *threadpool.Result, start time.Time, span time.Duration) error {
	comments := make([]string, 0, len(in.Partial)+len(r.Notes))
	for _, n := range in.Partial {
		comments = append(comments, "PARTIAL: "+n)
	}
	return ThreadPoolProfile(r, start, span, append(comments, r.Notes...)).Write(w)
}
