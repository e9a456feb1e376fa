package tui

import (
	"fmt"
	"strconv"

	"github.com/clrspy/clrspy/requests"
)

// RequestsPanel is the r panel's data (Options.Requests): package
// requests' figures since the session began, as clrspy requests reports
// them. Times are ms.
type RequestsPanel struct {
	Requests   int64          `json:"requests_total"`
	HitByPause int64          `json:"hit_by_pause"`
	PausedPct  float64        `json:"paused_pct"` // of the request time
	Source     string         `json:"request_events"`
	Routes     []RequestRoute `json:"routes"`
}

// RequestRoute is one route's row.
type RequestRoute struct {
	Route       string  `json:"route"` // method and route
	Count       int64   `json:"count"`
	P50Ms       float64 `json:"p50_ms"`
	P99Ms       float64 `json:"p99_ms"`
	MaxMs       float64 `json:"max_ms"`
	HitByPause  int64   `json:"hit_by_pause"`
	PausedMs    float64 `json:"paused_ms_total"`
	P99HitMs    float64 `json:"p99_hit_ms"`
	P99NotHitMs float64 `json:"p99_not_hit_ms"`
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// requestsPanelOf is the panel's data of r (nil: the monitor follows no
// requests).
func requestsPanelOf(r *requests.Result) *RequestsPanel {
	if r == nil {
		return nil
	}
	p := &RequestsPanel{Requests: r.Requests, HitByPause: r.HitByGC, Source: r.Source, Routes: []RequestRoute{}}
	if r.TotalNanos > 0 {
		p.PausedPct = 100 * float64(r.PausedNanos) / float64(r.TotalNanos)
	}
	for _, rt := range r.Routes {
		name := rt.Route
		if rt.Method != "" {
			name = rt.Method + " " + rt.Route
		}
		p.Routes = append(p.Routes, RequestRoute{Route: name, Count: rt.Count, P50Ms: ms(rt.P50), P99Ms: ms(rt.P99), MaxMs: ms(rt.Max),
			HitByPause: rt.HitByPause, PausedMs: ms(rt.PausedNanos), P99HitMs: ms(rt.P99Hit), P99NotHitMs: ms(rt.P99NotHit)})
	}
	return p
}

// requestsPanel: the requests per route since the session began, their
// latency and what GC pauses cost them, the most requests first.
func (m *Model) requestsPanel(sc *Screen, W, h int) []string {
	lines := []string{m.st.section.Render("requests")}
	if sc.Requests == nil {
		return append(lines, wrapWords("Requests are off: start clrspy top with --requests (ASP.NET Core's request events from Kestrel, no stacks).", W)...)
	}
	r := sc.Requests
	if r.Source == "" {
		return append(lines, wrapWords("No request event yet: the target serves no ASP.NET Core request (or none since the session began).", W)...)
	}
	hitPct := 0.0
	if r.Requests > 0 {
		hitPct = 100 * float64(r.HitByPause) / float64(r.Requests)
	}
	lines = append(lines, flow([][]string{{fmt.Sprintf("requests %d", r.Requests), fmt.Sprintf("hit by a GC %d (%s)", r.HitByPause, fmtPct(hitPct)),
		fmt.Sprintf("GC paused %s of the request time", fmtPct(r.PausedPct))}}, W)...)
	cols := fitColumns([]column{{"route", 28, false, 0, 12}, {"count", 8, true, 0, 0}, {"p50 ms", 8, true, 3, 0}, {"p99 ms", 8, true, 0, 0},
		{"max ms", 8, true, 2, 0}, {"hit", 6, true, 0, 0}, {"paused ms", 10, true, 1, 0}, {"p99 hit", 8, true, 4, 0}, {"p99 not hit", 11, true, 4, 0}}, W)
	lines = append(lines, m.st.dim.Render(headerLine(cols)))
	for _, rt := range r.Routes {
		if len(lines) >= h {
			break
		}
		vals := map[string]string{"route": truncate(rt.Route, cols[0].w), "count": strconv.FormatInt(rt.Count, 10), "p50 ms": fmtMS(rt.P50Ms), "p99 ms": fmtMS(rt.P99Ms),
			"max ms": fmtMS(rt.MaxMs), "hit": strconv.FormatInt(rt.HitByPause, 10), "paused ms": fmtMS(rt.PausedMs), "p99 hit": fmtMS(rt.P99HitMs),
			"p99 not hit": fmtMS(rt.P99NotHitMs)}
		line := ""
		for i, c := range cols {
			if i > 0 {
				line += "  "
			}
			line += c.cell(vals[c.title])
		}
		lines = append(lines, line)
	}
	return lines
}
