package report

import (
	"github.com/clrspy/clrspy/threadpool"
)

// PageThreadPool is the report page's thread-pool section: the pool's
// peak, injections by reason, starvation episodes and the blocking sites
// of its threads. Times are ms since the session start (the page's clock).
type PageThreadPool struct {
	ThreadsMax int            `json:"threads_max"`
	QueueMax   *float64       `json:"queue_max"`
	Injections int            `json:"injections"`
	ByReason   map[string]int `json:"by_reason"`
	Episodes   []PageEpisode  `json:"episodes"`
	Sites      []PageSite     `json:"sites"`
	BlockedMs  float64        `json:"blocked_ms"`
	Waits      int64          `json:"waits"`
	Source     string         `json:"source"`
	Notes      []string       `json:"notes"`
}

// PageEpisode is one starvation episode.
type PageEpisode struct {
	StartMs       float64 `json:"start_ms"`
	EndMs         float64 `json:"end_ms"`
	ThreadsBefore int     `json:"threads_before"`
	ThreadsAfter  int     `json:"threads_after"`
	Injections    int     `json:"injections"`
	Trigger       string  `json:"trigger"`
}

// PageSite is one blocking site (its stack leaf first).
type PageSite struct {
	Site          string   `json:"site"`
	Calls         string   `json:"calls"`
	BlockedMs     float64  `json:"blocked_ms"`
	Waits         int64    `json:"waits"`
	SyncOverAsync bool     `json:"sync_over_async"`
	Stack         []string `json:"stack"`
}

// PageThreadPoolOf is the page's section, nil when the stream had no
// thread-pool events and no blocking waits. first is the analysis' first
// event in ns since the session start (its times count from it): a file's
// page and a live one build the section with it.
func PageThreadPoolOf(r *threadpool.Result, first int64) *PageThreadPool {
	if r == nil {
		return nil
	}
	s := &r.Summary
	if s.WorkerStarts+s.WorkerWaits+s.Adjustments == 0 && len(r.Sites) == 0 {
		return nil
	}
	p := &PageThreadPool{ThreadsMax: s.ThreadsMax, Injections: s.Injections, ByReason: r.InjectionsByReason,
		BlockedMs: round3(ms(s.BlockedNs)), Waits: s.Waits, Source: s.Source, Notes: r.Notes,
		Episodes: []PageEpisode{}, Sites: []PageSite{}}
	if p.Notes == nil {
		p.Notes = []string{}
	}
	if s.HasQueue {
		q := s.QueueMax
		p.QueueMax = &q
	}
	for _, e := range r.Episodes {
		p.Episodes = append(p.Episodes, PageEpisode{StartMs: round3(ms(first + e.StartNs)), EndMs: round3(ms(first + e.EndNs)),
			ThreadsBefore: e.ThreadsBefore, ThreadsAfter: e.ThreadsAfter, Injections: e.Injections, Trigger: e.Trigger})
	}
	for i, st := range r.Sites {
		if i == maxTableRows {
			break
		}
		p.Sites = append(p.Sites, PageSite{Site: st.Site, Calls: st.Calls, BlockedMs: round3(ms(st.BlockedNs)), Waits: st.Waits,
			SyncOverAsync: st.SyncOverAsync, Stack: tpStrings(r.Stacks[st.Stack].Frames)})
	}
	return p
}
