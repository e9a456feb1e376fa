package report

import (
	"fmt"

	"github.com/clrspy/clrspy/hang"
)

// PageStacks is the page's threads section: clrspy stacks' snapshot of
// every thread, taken as the session ended (`report --stacks`).
type PageStacks struct {
	Threads    int            `json:"threads"`
	Sampled    int            `json:"sampled"`
	ByWaitKind map[string]int `json:"by_wait_kind"`
	// PausedMs is what the snapshot cost the target.
	PausedMs float64 `json:"paused_ms"`
	// Deadlocks and HangChains say in one line each what clrspy stacks'
	// text says (threads, locks, owners).
	Deadlocks  []string          `json:"deadlocks"`
	HangChains []string          `json:"hang_chains"`
	Groups     []PageStacksGroup `json:"groups"`
}

// PageStacksGroup is threads with the same managed stack.
type PageStacksGroup struct {
	Count    int      `json:"count"`
	WaitKind string   `json:"wait_kind"`
	Threads  []uint64 `json:"threads"`
	Frames   []string `json:"frames"`
}

// pageStacksGroups bounds the groups the page holds (the largest first).
const pageStacksGroups = 50

func newPageStacks(r *hang.Result) *PageStacks {
	if r == nil {
		return nil
	}
	p := &PageStacks{Threads: len(r.Threads), Sampled: r.Sampled, ByWaitKind: r.ByWaitKind, PausedMs: r.TargetPaused.TotalMs,
		Deadlocks: []string{}, HangChains: []string{}, Groups: []PageStacksGroup{}}
	for _, d := range r.Deadlocks {
		s := "DEADLOCK"
		if d.Suspected {
			s = "SUSPECTED DEADLOCK"
		}
		s += ": threads " + tidList(d.Threads)
		for _, l := range d.Locks {
			owner := "an unknown thread"
			if l.OwnerOSTid != nil {
				owner = fmt.Sprint(*l.OwnerOSTid)
			}
			s += fmt.Sprintf("; %d waits for %s (%s) held by %s", l.WaiterOSTid, orDash(l.Object), typeOrUnknown(l.ObjectType), owner)
		}
		p.Deadlocks = append(p.Deadlocks, s)
	}
	for _, c := range r.HangChains {
		kind := "running"
		if c.RootWait != nil {
			kind = c.RootWait.Kind
		}
		p.HangChains = append(p.HangChains, fmt.Sprintf("HANG CHAIN: threads %s wait, through lock owners, on thread %d (%s)", tidList(c.Waiters), c.Root, kind))
	}
	for i, g := range r.Groups {
		if i == pageStacksGroups {
			break
		}
		p.Groups = append(p.Groups, PageStacksGroup{Count: g.Count, WaitKind: g.WaitKind, Threads: g.Threads, Frames: g.Frames})
	}
	return p
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
