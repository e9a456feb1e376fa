package requests

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/clrspy/clrspy/analysis"
)

// Result is what the analysis found. Durations are nanoseconds.
type Result struct {
	// Requests counts the completed requests; HitByGC those a GC pause
	// overlapped.
	Requests, HitByGC int64
	// TotalNanos is the requests' summed wall time, PausedNanos the part
	// of it GC pauses overlapped.
	TotalNanos, PausedNanos int64
	Routes                  []RouteStats
	// Slowest are the slowest requests, slowest first.
	Slowest []Request
	// GCs is every GC pause seen (in order), with the requests it hit.
	GCs []GCDamage
	// Source says which events made the requests: "kestrel", "hosting"
	// or "" (none seen).
	Source string
	// ActivityFlow is set when the events carried activity ids (the task
	// library's flow was on): outgoing calls are timed and threads are
	// attributed by activity; otherwise by the thread a request started on.
	ActivityFlow bool
	// Unpaired events: stops without their start (the start preceded the
	// session or was lost), requests still open at the end, starts not
	// followed (a second start of an open request, or beyond MaxOpen).
	StopsWithoutStart, OpenAtEnd, Dropped int64
	// HTTPUntimed counts outgoing calls without an activity id (counted,
	// not timed); HTTPUnpaired calls that ended after their request.
	HTTPUntimed, HTTPUnpaired int64
	// Open are the oldest requests still open at the end (EndNanos 0).
	Open []Request
	// StatusStops counts the HttpRequestIn.Stop events that gave a
	// status; StatusForeign the events DiagnosticSource forwarded for
	// another session's specs (process-wide: the last session's win).
	StatusStops, StatusForeign int64
	// StatusTakenOver counts the times DiagnosticSource was (re)enabled
	// with specs that are not clrspy's (its Version, then a Message per
	// spec): another session's replaced clrspy's from then on.
	StatusTakenOver int64
	// GCsDropped counts GCs beyond MaxGCs whose damage was not kept.
	GCsDropped int64
	Notes      []string
}

// RouteStats is one route's figures. Latencies are quantiles of a sketch
// within 1 % of the exact value; Max is exact.
type RouteStats struct {
	Method, Route         string
	Count, HitByPause     int64
	P50, P90, P99, P999   int64
	Max                   int64
	PausedNanos           int64
	TotalNanos            int64
	P99Hit, P99NotHit     int64
	FirstNanos, LastNanos int64
	// Durations counts the route's durations in DurationBounds' buckets
	// (a copy: serve exports it as a histogram).
	Durations analysis.Histogram
}

// Rate is the route's requests per second over its span (0 for one).
func (r *RouteStats) Rate() float64 {
	if d := r.LastNanos - r.FirstNanos; d > 0 {
		return float64(r.Count) * 1e9 / float64(d)
	}
	return 0
}

// GCDamage is one GC's pause and what it cost the requests in flight.
type GCDamage struct {
	GC               uint32
	BeginNanos       int64
	PauseNanos       int64 // the sum of its stops
	InFlight         int64 // requests it froze
	RequestNanosLost int64 // the request time it cost (summed over them)
	SlowestNanos     int64 // the slowest request it hit
	SlowestID        string
	SlowestRoute     string
}

// Result returns what the analysis found so far.
func (a *Analyzer) Result() *Result {
	res := &Result{Requests: a.requests, HitByGC: a.hitByGC, TotalNanos: a.totalNanos, PausedNanos: a.pausedNano,
		ActivityFlow: a.flow, StopsWithoutStart: a.stopsNoStart, OpenAtEnd: a.openAtEnd, Dropped: a.dropped,
		HTTPUntimed: a.httpUntimed, HTTPUnpaired: a.httpUnpaired, GCsDropped: a.gcsDropped,
		StatusStops: a.statusStops, StatusForeign: a.statusForeign, StatusTakenOver: a.statusTakenOver + a.specsForeign(),
		Routes: []RouteStats{}, Slowest: []Request{}, GCs: []GCDamage{}, Notes: []string{}}
	switch {
	case a.kestrel:
		res.Source = "kestrel"
	case a.requests > 0:
		res.Source = "hosting"
	}
	for _, ra := range a.routes {
		res.Routes = append(res.Routes, RouteStats{Method: ra.method, Route: ra.route, Count: int64(ra.all.n),
			HitByPause: int64(ra.hit.n), P50: ra.all.quantile(0.5), P90: ra.all.quantile(0.9),
			P99: ra.all.quantile(0.99), P999: ra.all.quantile(0.999), Max: ra.all.max,
			PausedNanos: ra.pausedNanos, TotalNanos: ra.totalNano, P99Hit: ra.hit.quantile(0.99),
			P99NotHit: ra.notHit.quantile(0.99), FirstNanos: ra.first, LastNanos: ra.last,
			Durations: ra.hist.Clone()})
	}
	slices.SortFunc(res.Routes, func(x, y RouteStats) int {
		return cmp.Or(cmp.Compare(y.Count, x.Count), cmp.Compare(x.Route, y.Route), cmp.Compare(x.Method, y.Method))
	})
	res.Open = append([]Request{}, a.openList...)
	res.Slowest = append(res.Slowest, a.slow...)
	slices.SortFunc(res.Slowest, func(x, y Request) int {
		return cmp.Or(cmp.Compare(y.DurationNanos(), x.DurationNanos()), cmp.Compare(x.StartNanos, y.StartNanos))
	})
	for i := range a.gcs.Len() {
		res.GCs = append(res.GCs, GCDamage(*a.gcs.At(i)))
	}
	if res.Source == "" {
		res.Notes = append(res.Notes, "no request events: the target serves no ASP.NET Core requests, or its session lacks the Microsoft-AspNetCore-Server-Kestrel provider")
	}
	if !res.ActivityFlow && res.Requests > 0 {
		res.Notes = append(res.Notes, "no activity ids (TplEventSource flow off): threads are attributed to the request that last started on them, outgoing calls are counted, not timed")
	}
	switch {
	case res.Requests == 0:
	case res.StatusTakenOver > 0:
		res.Notes = append(res.Notes, fmt.Sprintf("status unknown from then on: another session enabled Microsoft-Diagnostics-DiagnosticSource with specs of its own (%d times), which replaced clrspy's (they are process-wide, the last session's win: another session holds it)", res.StatusTakenOver))
	case res.StatusForeign > 0:
		res.Notes = append(res.Notes, fmt.Sprintf("status unknown where missing: Microsoft-Diagnostics-DiagnosticSource forwarded %d events of another session's FilterAndPayloadSpecs (they are process-wide, the last session's win: another session holds it)", res.StatusForeign))
	case res.StatusStops == 0:
		res.Notes = append(res.Notes, "status unknown: no HttpRequestIn.Stop came through Microsoft-Diagnostics-DiagnosticSource (the session did not ask for it, or another session's FilterAndPayloadSpecs replaced clrspy's: they are process-wide, the last session's win)")
	default:
		unknown := 0
		for i := range res.Slowest {
			if res.Slowest[i].Status == 0 {
				unknown++
			}
		}
		if unknown > 0 {
			res.Notes = append(res.Notes, fmt.Sprintf("status unknown for %d of the slowest requests: their HttpRequestIn.Stop did not come (the stream ended first, or DiagnosticSource's specs changed)", unknown))
		}
	}
	if res.OpenAtEnd > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d requests were still open when the stream ended (not counted)", res.OpenAtEnd))
	}
	if res.StopsWithoutStart > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d request stops had no start (begun before the session, or lost)", res.StopsWithoutStart))
	}
	if res.Dropped > 0 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d request starts were not followed (a repeated start, or more than %d open at once)", res.Dropped, a.opts.MaxOpen))
	}
	return res
}

// HitByGCNumber is the requests each GC hit, by GC number; nil on a nil
// result or without request events.
func (r *Result) HitByGCNumber() map[uint32]int64 {
	if r == nil || r.Source == "" {
		return nil
	}
	hits := make(map[uint32]int64, len(r.GCs))
	for _, g := range r.GCs {
		hits[g.GC] = g.InFlight
	}
	return hits
}
