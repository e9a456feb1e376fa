package metrics

import (
	"github.com/clrspy/clrspy/internal/monitor"
)

// The requests' families (monitor.Options.Requests: Kestrel's request
// events joined with the GC pauses, package requests, as clrspy requests
// reports them). Routes are the paths with numbers and ids folded
// (/orders/{n}), at most 1,000 per process (later ones: [other routes]).
var (
	LabelMethod = Label{"method", "http.request.method"}
	LabelRoute  = Label{"route", "http.route"}

	famRequests = &Family{Name: "clrspy_requests_total", OTel: "clrspy.requests", OTelUnit: "{request}", Kind: Counter,
		Help:   "Requests the process's Kestrel server completed since the session began (RequestStart to RequestStop), by method and route (the path with numbers and ids folded).",
		Labels: target(LabelMethod, LabelRoute)}
	famRequestDuration = &Family{Name: "clrspy_request_duration_seconds", OTel: "clrspy.request.duration", OTelUnit: "s", Kind: Histogram,
		Help:   "Duration of the requests Kestrel completed since the session began, RequestStart to RequestStop, by method and route.",
		Labels: target(LabelMethod, LabelRoute)}
	famRequestPaused = &Family{Name: "clrspy_request_gc_paused_seconds_total", OTel: "clrspy.request.gc_paused", OTelUnit: "s", Kind: Counter,
		Help:   "Request time GC pauses froze since the session began: the overlap of each completed request with every stop-the-world GC pause (SuspendEEBegin to RestartEEEnd), summed, by method and route.",
		Labels: target(LabelMethod, LabelRoute)}
	famRequestsHit = &Family{Name: "clrspy_requests_hit_by_gc_total", OTel: "clrspy.requests.hit_by_gc", OTelUnit: "{request}", Kind: Counter,
		Help:   "Completed requests a GC pause overlapped since the session began, by method and route.",
		Labels: target(LabelMethod, LabelRoute)}
)

var _ = func() bool {
	ownFamilies = append(ownFamilies, famRequests, famRequestDuration, famRequestPaused, famRequestsHit)
	return true
}()

// walkRequests exports the snapshot's requests, per route, when the
// target served any (a process without Kestrel events has no series).
func walkRequests(snap *monitor.Snapshot, lv func(...string) []string, s sink) {
	r := snap.Requests
	if r == nil {
		return
	}
	for i := range r.Routes {
		rt := &r.Routes[i]
		l := lv(rt.Method, rt.Route)
		s.value(famRequests, float64(rt.Count), l)
		s.hist(famRequestDuration, rt.Durations, nil, l)
		s.value(famRequestPaused, float64(rt.PausedNanos)/1e9, l)
		s.value(famRequestsHit, float64(rt.HitByPause), l)
	}
}
