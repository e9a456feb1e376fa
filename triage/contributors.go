package triage

import (
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// ThreadPool is package threadpool's analysis as a contributor: the
// starvation episodes it finds (from the pool's own adjustment events) and
// its top blocking site replace what the counters alone say; its peak
// thread count counts when it is higher. Without thread-pool events in the
// stream it leaves the counters' facts alone.
func ThreadPool(hdr *nettrace.Header, sym *stacks.Symbols) Contributor {
	return &tpContributor{threadpool.New(hdr, threadpool.Options{Symbols: sym})}
}

type tpContributor struct{ *threadpool.Analyzer }

func (c *tpContributor) Contribute(f *Facts) {
	r := c.Result()
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

func (c *excContributor) Contribute(f *Facts) {
	r := c.Result()
	if r.Thrown == 0 {
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
