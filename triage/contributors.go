package triage

import (
	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/requests"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// ThreadPool is package threadpool's analysis as a contributor: the
// starvation episodes it finds (from the pool's own adjustment events) and
// its top blocking site replace what the counters alone say; its peak
// thread count counts when it is higher. Without thread-pool events in the
// stream it leaves the counters' facts alone.
func ThreadPool(hdr *nettrace.Header, sym *stacks.Symbols) Contributor {
	return &tpContributor{threadpool.New(hdr, threadpool.Options{Symbols: sym, Counters: counters.New(hdr, counters.Options{}), FeedCounters: true})}
}

type tpContributor struct{ *threadpool.Analyzer }

func (c *tpContributor) Contribute(f *Facts) { ThreadPoolFrom(f, c.Result()) }

// ThreadPoolFrom fills f's thread-pool facts from package threadpool's
// result (the contributor's, a live model's): one judgement of the pool
// on every surface. Without thread-pool events it leaves them alone.
func ThreadPoolFrom(f *Facts, r *threadpool.Result) {
	if r == nil {
		return
	}
	s := &r.Summary
	if !s.HasThreads && s.Adjustments == 0 && len(r.Sites) == 0 {
		return
	}
	t := &f.ThreadPool
	t.Seen = true
	t.Source = "threadpool"
	t.Starvations = s.Episodes
	if s.HasThreads {
		t.ThreadsMax = max(t.ThreadsMax, float64(s.ThreadsMax))
	}
	if s.HasQueue {
		t.QueueMax = max(t.QueueMax, s.QueueMax)
	}
	if len(r.Sites) > 0 {
		site := r.Sites[0]
		t.TopBlockingSite = site.Site
		if site.Calls != "" {
			t.TopBlockingSite += " → " + site.Calls
		}
	}
}

// Exceptions is package exceptions' analysis as a contributor: where the
// stream has the exception events (a trace recorded with them, a session
// that asked for them) it counts every throw and names the top type and
// its top throw site; otherwise the counters' count stands.
func Exceptions(hdr *nettrace.Header, sym *stacks.Symbols) Contributor {
	return &excContributor{exceptions.New(hdr, exceptions.Options{Symbols: sym})}
}

type excContributor struct{ *exceptions.Analyzer }

func (c *excContributor) Contribute(f *Facts) { ExceptionsFrom(f, c.Result()) }

// ExceptionsFrom fills f's exception facts from package exceptions'
// result (the contributor's, a live model's) over f.WindowSec: every
// throw, the top type and its top site. With none thrown the counters'
// facts stand.
func ExceptionsFrom(f *Facts, r *exceptions.Result) {
	if r == nil || r.Thrown == 0 {
		return
	}
	x := &f.Exceptions
	x.Seen = true
	x.Source = "exceptions"
	x.Count = float64(r.Thrown)
	if f.WindowSec > 0 {
		x.PerSec = x.Count / f.WindowSec
	}
	if len(r.Types) > 0 {
		x.TopType = r.Types[0].Name
		if len(r.Types[0].ThrowSites) > 0 {
			x.TopSite = r.Types[0].ThrowSites[0].Site
		}
	}
}

// Requests is package requests' analysis as a contributor: where the
// stream has ASP.NET Core's request events it says what share of the
// requests GC pauses hit and of their time they froze (Facts.Requests).
// In a Set it observes the pause analysis' suspensions (and locks'
// waits): register it after them.
func Requests(hdr *nettrace.Header) Contributor {
	return &reqContributor{requests.New(hdr, requests.Options{Slowest: 1})}
}

type reqContributor struct{ *requests.Analyzer }

func (c *reqContributor) Contribute(f *Facts) { RequestsFrom(f, c.Result()) }

// RequestsFrom sets f.Requests from package requests' result (the
// contributor's, a live model's; nil or without request events: unset).
func RequestsFrom(f *Facts, r *requests.Result) {
	if r == nil || r.Source == "" {
		return
	}
	q := &RequestFacts{Requests: r.Requests, HitByGC: r.HitByGC, RequestMs: float64(r.TotalNanos) / 1e6, PausedMs: float64(r.PausedNanos) / 1e6}
	if r.Requests > 0 {
		q.HitPct = 100 * float64(r.HitByGC) / float64(r.Requests)
	}
	if r.TotalNanos > 0 {
		q.PausedPct = 100 * float64(r.PausedNanos) / float64(r.TotalNanos)
	}
	worst := -1.0
	for i := range r.Routes {
		rt := &r.Routes[i]
		if rt.Count < MinRequests || rt.HitByPause == 0 {
			continue
		}
		if share := float64(rt.HitByPause) / float64(rt.Count); share > worst {
			worst = share
			q.WorstRoute = rt.Route
			if rt.Method != "" {
				q.WorstRoute = rt.Method + " " + rt.Route
			}
			q.WorstRouteCount, q.WorstRouteHit = rt.Count, rt.HitByPause
			q.WorstRouteP99HitMs, q.WorstRouteP99NotHitMs = float64(rt.P99Hit)/1e6, float64(rt.P99NotHit)/1e6
		}
	}
	f.Requests = q
}
