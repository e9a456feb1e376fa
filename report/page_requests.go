package report

import (
	"cmp"
	"slices"

	"github.com/clrspy/clrspy/requests"
)

// PageRequests is the report page's requests section (package requests'
// Result, as clrspy requests reports it): the totals, the per-route table
// and the GCs that hit requests, the most requests hit first. Times are
// ms; start_ms since the session start (the page's clock).
type PageRequests struct {
	Requests     int64              `json:"requests_total"`
	HitByPause   int64              `json:"hit_by_pause"`
	RequestMs    float64            `json:"request_ms_total"`
	PausedMs     float64            `json:"paused_ms_total"`
	PausedShare  float64            `json:"paused_share"`
	Source       string             `json:"request_events"`
	Routes       []RequestRouteJSON `json:"routes"`
	MoreRoutes   int                `json:"more_routes"`
	Pauses       []RequestPauseJSON `json:"pauses"`
	PausesHit    int                `json:"pauses_hit"`
	OpenAtEnd    int64              `json:"open_at_end"`
	StopsNoStart int64              `json:"stops_without_start"`
	// Slowest are the slowest requests with their segments (the
	// waterfall drawn on the timeline's clock).
	Slowest []RequestJSON `json:"slowest"`
	Notes   []string      `json:"notes"`
}

// PageRequestsOf is the page's section, nil when the stream had no
// request events.
func PageRequestsOf(r *requests.Result) *PageRequests {
	if r == nil || r.Source == "" {
		return nil
	}
	d := NewRequestsDocument(Input{}, r)
	p := &PageRequests{Requests: d.RequestsTotal, HitByPause: d.HitByPause, RequestMs: d.RequestMsTotal,
		PausedMs: d.PausedMsTotal, PausedShare: d.PausedShare, Source: d.RequestEvents, Routes: d.Routes,
		Pauses: []RequestPauseJSON{}, Slowest: d.Slowest, OpenAtEnd: d.OpenAtEnd, StopsNoStart: d.StopsWithoutStart, Notes: d.Notes}
	if len(p.Routes) > maxTableRows {
		p.MoreRoutes = len(p.Routes) - maxTableRows
		p.Routes = p.Routes[:maxTableRows]
	}
	for _, g := range d.Pauses {
		if g.InFlight > 0 {
			p.Pauses = append(p.Pauses, g)
		}
	}
	p.PausesHit = len(p.Pauses)
	slices.SortStableFunc(p.Pauses, func(x, y RequestPauseJSON) int {
		return cmp.Or(cmp.Compare(y.InFlight, x.InFlight), cmp.Compare(y.RequestMsLost, x.RequestMsLost))
	})
	if len(p.Pauses) > maxTableRows {
		p.Pauses = p.Pauses[:maxTableRows]
	}
	return p
}
