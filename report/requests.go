package report

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/clrspy/clrspy/requests"
)

// RequestsDocument is the `clrspy requests --json` document (docs/requests.md
// is its contract). Times are milliseconds; start_ms is since the stream's
// start.
type RequestsDocument struct {
	Input
	RequestsTotal     int64              `json:"requests_total"`
	HitByPause        int64              `json:"hit_by_pause"`
	RequestMsTotal    float64            `json:"request_ms_total"`
	PausedMsTotal     float64            `json:"paused_ms_total"`
	PausedShare       float64            `json:"paused_share"`
	RequestEvents     string             `json:"request_events"`
	ActivityFlow      bool               `json:"activity_flow"`
	StopsWithoutStart int64              `json:"stops_without_start"`
	OpenAtEnd         int64              `json:"open_at_end"`
	Dropped           int64              `json:"dropped"`
	HTTPOutUntimed    int64              `json:"http_out_untimed"`
	Routes            []RequestRouteJSON `json:"routes"`
	Slowest           []RequestJSON      `json:"slowest"`
	Open              []RequestJSON      `json:"open"`
	Pauses            []RequestPauseJSON `json:"pauses"`
	Notes             []string           `json:"notes"`
}

// RequestRouteJSON is one route.
type RequestRouteJSON struct {
	Method      string  `json:"method"`
	Route       string  `json:"route"`
	Count       int64   `json:"count"`
	RatePerSec  float64 `json:"rate_per_sec"`
	P50Ms       float64 `json:"p50_ms"`
	P90Ms       float64 `json:"p90_ms"`
	P99Ms       float64 `json:"p99_ms"`
	P999Ms      float64 `json:"p99_9_ms"`
	MaxMs       float64 `json:"max_ms"`
	PausedMs    float64 `json:"paused_ms_total"`
	RequestMs   float64 `json:"request_ms_total"`
	HitByPause  int64   `json:"hit_by_pause"`
	P99HitMs    float64 `json:"p99_hit_ms"`
	P99NotHitMs float64 `json:"p99_not_hit_ms"`
}

// RequestJSON is one request.
type RequestJSON struct {
	ID           string   `json:"id"`
	Method       string   `json:"method"`
	Path         string   `json:"path"`
	Route        string   `json:"route"`
	Status       *int     `json:"status"` // null: unknown (Result.Notes says why)
	StartMs      float64  `json:"start_ms"`
	DurationMs   float64  `json:"duration_ms"`
	GCPausedMs   float64  `json:"gc_paused_ms"`
	SuspendedMs  float64  `json:"suspended_ms"`
	LockWaitMs   float64  `json:"lock_wait_ms"`
	BlockedMs    float64  `json:"blocked_ms"`
	HTTPOutMs    float64  `json:"http_out_ms"`
	HTTPOutCount int      `json:"http_out_count"`
	Exceptions   int      `json:"exceptions"`
	GCs          []uint32 `json:"gcs"`
	// Segments are the request's waterfall: its GC pauses, suspensions,
	// lock waits, blocked waits and outgoing calls, in time order.
	Segments        []RequestSegmentJSON `json:"segments"`
	SegmentsDropped int                  `json:"segments_dropped"`
}

// RequestSegmentJSON is one part of a request's time (start_ms on the
// document's clock, like the request's).
type RequestSegmentJSON struct {
	Kind       string  `json:"kind"` // gc_paused, suspended, lock_wait, blocked, http_out
	GC         uint32  `json:"gc"`   // the GC of a gc_paused segment, else 0
	StartMs    float64 `json:"start_ms"`
	DurationMs float64 `json:"duration_ms"`
}

// RequestPauseJSON is one GC's damage.
type RequestPauseJSON struct {
	GC            uint32  `json:"gc"`
	StartMs       float64 `json:"start_ms"`
	PauseMs       float64 `json:"pause_ms"`
	InFlight      int64   `json:"in_flight"`
	RequestMsLost float64 `json:"request_ms_lost"`
	SlowestHitMs  float64 `json:"slowest_hit_ms"`
	SlowestHitID  string  `json:"slowest_hit_id"`
}

func reqMs(ns int64) float64 { return float64(ns) / 1e6 }

// NewRequestJSON is one request's row.
func NewRequestJSON(r *requests.Request) RequestJSON {
	gcs := r.GCs
	if gcs == nil {
		gcs = []uint32{}
	}
	var status *int
	if r.Status != 0 {
		status = &r.Status
	}
	return RequestJSON{ID: r.ID, Method: r.Method, Path: r.Path, Route: r.Route, Status: status,
		StartMs: reqMs(r.StartNanos), DurationMs: reqMs(r.DurationNanos()), GCPausedMs: reqMs(r.GCPausedNanos),
		SuspendedMs: reqMs(r.SuspendedNanos), LockWaitMs: reqMs(r.LockWaitNanos), BlockedMs: reqMs(r.BlockedNanos),
		HTTPOutMs: reqMs(r.HTTPOutNanos), HTTPOutCount: r.HTTPOutCount, Exceptions: r.Exceptions, GCs: gcs,
		Segments: segmentsJSON(r.Segments), SegmentsDropped: r.SegmentsDropped}
}

func segmentsJSON(ss []requests.Segment) []RequestSegmentJSON {
	out := make([]RequestSegmentJSON, 0, len(ss))
	for _, s := range ss {
		out = append(out, RequestSegmentJSON{Kind: s.Kind.String(), GC: s.GC, StartMs: reqMs(s.BeginNanos),
			DurationMs: reqMs(s.EndNanos - s.BeginNanos)})
	}
	return out
}

// NewRequestsDocument builds the JSON document.
func NewRequestsDocument(in Input, r *requests.Result) *RequestsDocument {
	d := &RequestsDocument{Input: in, RequestsTotal: r.Requests, HitByPause: r.HitByGC,
		RequestMsTotal: reqMs(r.TotalNanos), PausedMsTotal: reqMs(r.PausedNanos), RequestEvents: r.Source,
		ActivityFlow: r.ActivityFlow, StopsWithoutStart: r.StopsWithoutStart, OpenAtEnd: r.OpenAtEnd,
		Dropped: r.Dropped, HTTPOutUntimed: r.HTTPUntimed, Routes: []RequestRouteJSON{},
		Slowest: []RequestJSON{}, Open: []RequestJSON{}, Pauses: []RequestPauseJSON{}, Notes: r.Notes}
	if r.TotalNanos > 0 {
		d.PausedShare = float64(r.PausedNanos) / float64(r.TotalNanos)
	}
	for _, rt := range r.Routes {
		d.Routes = append(d.Routes, RequestRouteJSON{Method: rt.Method, Route: rt.Route, Count: rt.Count,
			RatePerSec: rt.Rate(), P50Ms: reqMs(rt.P50), P90Ms: reqMs(rt.P90), P99Ms: reqMs(rt.P99),
			P999Ms: reqMs(rt.P999), MaxMs: reqMs(rt.Max), PausedMs: reqMs(rt.PausedNanos),
			RequestMs: reqMs(rt.TotalNanos), HitByPause: rt.HitByPause, P99HitMs: reqMs(rt.P99Hit),
			P99NotHitMs: reqMs(rt.P99NotHit)})
	}
	for i := range r.Slowest {
		d.Slowest = append(d.Slowest, NewRequestJSON(&r.Slowest[i]))
	}
	for i := range r.Open {
		o := NewRequestJSON(&r.Open[i])
		o.DurationMs = 0
		d.Open = append(d.Open, o)
	}
	for _, g := range r.GCs {
		d.Pauses = append(d.Pauses, RequestPauseJSON{GC: g.GC, StartMs: reqMs(g.BeginNanos), PauseMs: reqMs(g.PauseNanos),
			InFlight: g.InFlight, RequestMsLost: reqMs(g.RequestNanosLost), SlowestHitMs: reqMs(g.SlowestNanos),
			SlowestHitID: g.SlowestID})
	}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	return d
}

// WriteRequestsJSON writes the document, indented.
func WriteRequestsJSON(w io.Writer, d *RequestsDocument) error {
	return writeJSON(w, d, false)
}

// WriteRequestsText writes the report for people: the totals, the routes,
// the GCs that hit requests and the slowest requests with their breakdown.
func WriteRequestsText(w io.Writer, in Input, r *requests.Result) error {
	ew := &lockErrWriter{w: w}
	if l := in.PartialLine(); l != "" {
		fmt.Fprintln(ew, l)
	}
	fmt.Fprintf(ew, "Requests in %s\n", in.Source)
	share := 0.0
	if r.TotalNanos > 0 {
		share = 100 * float64(r.PausedNanos) / float64(r.TotalNanos)
	}
	fmt.Fprintf(ew, "  %d requests, %d hit by a GC pause; GC pauses are %.2f %% of the request time (%s of %s)\n",
		r.Requests, r.HitByGC, share, lockDur(r.PausedNanos), lockDur(r.TotalNanos))
	if len(r.Routes) > 0 {
		fmt.Fprintln(ew)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "ROUTE\tCOUNT\tRATE/S\tP50\tP90\tP99\tP99.9\tMAX\tHIT\tPAUSED\tP99 HIT\tP99 NOT HIT\t")
		for _, rt := range r.Routes {
			fmt.Fprintf(tw, "%s %s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t\n", rt.Method, rt.Route, rt.Count, rt.Rate(),
				lockDur(rt.P50), lockDur(rt.P90), lockDur(rt.P99), lockDur(rt.P999), lockDur(rt.Max), rt.HitByPause,
				lockDur(rt.PausedNanos), lockDur(rt.P99Hit), lockDur(rt.P99NotHit))
		}
		tw.Flush()
	}
	hit := 0
	for _, g := range r.GCs {
		if g.InFlight > 0 {
			hit++
		}
	}
	if hit > 0 {
		fmt.Fprintf(ew, "\nGC pauses that hit requests (%d of %d)\n", hit, len(r.GCs))
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "GC\tSTART\tPAUSE\tIN FLIGHT\tREQUEST TIME LOST\tSLOWEST HIT\t")
		for _, g := range r.GCs {
			if g.InFlight == 0 {
				continue
			}
			fmt.Fprintf(tw, "%d\t%.3fs\t%s\t%d\t%s\t%s %s\t\n", g.GC, float64(g.BeginNanos)/1e9, lockDur(g.PauseNanos),
				g.InFlight, lockDur(g.RequestNanosLost), lockDur(g.SlowestNanos), g.SlowestRoute)
		}
		tw.Flush()
	}
	if len(r.Slowest) > 0 {
		fmt.Fprintf(ew, "\nSlowest requests\n")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "REQUEST\tSTATUS\tSTART\tDURATION\tGC PAUSED\tSUSPENDED\tLOCK WAIT\tBLOCKED\tHTTP OUT\tEXC\tID\t")
		for _, q := range r.Slowest {
			out := "-"
			if q.HTTPOutCount > 0 {
				out = fmt.Sprintf("%s (%d)", lockDur(q.HTTPOutNanos), q.HTTPOutCount)
			}
			status := "?"
			if q.Status != 0 {
				status = strconv.Itoa(q.Status)
			}
			fmt.Fprintf(tw, "%s %s\t%s\t%.3fs\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", q.Method, q.Path, status, float64(q.StartNanos)/1e9,
				lockDur(q.DurationNanos()), lockDur(q.GCPausedNanos), lockDur(q.SuspendedNanos), lockDur(q.LockWaitNanos),
				lockDur(q.BlockedNanos), out, q.Exceptions, q.ID)
		}
		tw.Flush()
		writeWaterfalls(ew, r.Slowest)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	return ew.err
}

// Waterfall text: a bar per request, the slowest full width, its parts
// marked where they fall in its interval.
const (
	wfLabel = 24 // method and path
	wfBar   = 56 // the slowest request's bar
)

// wfMarks are the letters of the segment kinds, by kind, and their
// precedence when several share a cell (the pause first).
var wfMarks = [...]byte{'=', 'G', 'S', 'L', 'B', 'H'}

// waterfallBar is q's bar of n cells: each cell shows the kind that
// covers most of it ('=' where none does: running or waiting on
// something clrspy does not see); a segment shorter than a cell still
// marks the cell it falls in most.
func waterfallBar(q *requests.Request, n int) string {
	b := make([]byte, n)
	d := q.DurationNanos()
	if d <= 0 || n <= 0 {
		return string(b)
	}
	var cover [len(wfMarks)]int64
	for i := range b {
		c0 := q.StartNanos + d*int64(i)/int64(n)
		c1 := q.StartNanos + d*int64(i+1)/int64(n)
		clear(cover[:])
		for _, s := range q.Segments {
			if ov := min(s.EndNanos, c1) - max(s.BeginNanos, c0); ov > 0 && int(s.Kind) < len(wfMarks) {
				cover[s.Kind] += ov
			}
		}
		best := 0
		for k := 1; k < len(cover); k++ {
			if cover[k] > cover[best] || best == 0 && cover[k] > 0 {
				best = k
			}
		}
		b[i] = wfMarks[best]
	}
	// A segment that covers no cell most still shows in the cell it
	// overlaps most.
	for _, s := range q.Segments {
		if int(s.Kind) >= len(wfMarks) || s.EndNanos <= s.BeginNanos {
			continue
		}
		mid := (max(s.BeginNanos, q.StartNanos) + min(s.EndNanos, q.EndNanos)) / 2
		i := int((mid - q.StartNanos) * int64(n) / d)
		i = min(max(i, 0), n-1)
		if !hasMark(b, wfMarks[s.Kind], s, q, n) {
			b[i] = wfMarks[s.Kind]
		}
	}
	return string(b)
}

// hasMark reports whether s's letter is in one of the cells s overlaps.
func hasMark(b []byte, m byte, s requests.Segment, q *requests.Request, n int) bool {
	d := q.DurationNanos()
	lo := int((max(s.BeginNanos, q.StartNanos) - q.StartNanos) * int64(n) / d)
	hi := int((min(s.EndNanos, q.EndNanos) - q.StartNanos) * int64(n) / d)
	for i := max(lo, 0); i <= min(hi, n-1); i++ {
		if b[i] == m {
			return true
		}
	}
	return false
}

// writeWaterfalls writes the slowest requests' waterfalls (lines of at
// most 100 columns).
func writeWaterfalls(w io.Writer, slowest []requests.Request) {
	if len(slowest) == 0 {
		return
	}
	dmax := slowest[0].DurationNanos()
	for i := range slowest {
		dmax = max(dmax, slowest[i].DurationNanos())
	}
	fmt.Fprintf(w, "\nWaterfalls of the slowest requests (the slowest full width)\n")
	fmt.Fprintf(w, "  G GC paused  S suspended  L lock wait  B blocked  H outgoing HTTP  = the rest\n")
	for i := range slowest {
		q := &slowest[i]
		label := q.Method + " " + q.Path
		if len(label) > wfLabel {
			label = label[:wfLabel-1] + "~"
		}
		n := wfBar
		if dmax > 0 {
			n = max(1, int((q.DurationNanos()*wfBar+dmax/2)/dmax))
		}
		status := "  ?"
		if q.Status != 0 {
			status = fmt.Sprintf("%3d", q.Status)
		}
		fmt.Fprintf(w, "  %-*s %s %9s |%s|\n", wfLabel, label, status, lockDur(q.DurationNanos()), waterfallBar(q, n))
	}
}
