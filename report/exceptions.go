package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/exceptions"
)

// ExceptionsDocument is the `clrspy exceptions --json` document.
type ExceptionsDocument struct {
	Input
	// Thrown counts first-chance exceptions (every ExceptionThrown,
	// rethrows included).
	Thrown   int64 `json:"thrown"`
	Rethrown int64 `json:"rethrown"`
	Nested   int64 `json:"nested"`
	// Caught, Uncaught and OpenAtEnd split Thrown by how its dispatch
	// ended (see exceptions.Result); they add up to Thrown when
	// HandlingEvents is true and nothing was lost.
	Caught         int64   `json:"caught"`
	Uncaught       int64   `json:"uncaught"`
	OpenAtEnd      int64   `json:"open_at_end"`
	FinallyRuns    int64   `json:"finally_runs"`
	FilterRuns     int64   `json:"filter_runs"`
	HandlingEvents bool    `json:"handling_events"`
	SpanMs         float64 `json:"span_ms"`
	// RatePerS is Thrown over the span; PeakPerS the busiest timeline bin.
	RatePerS float64               `json:"rate_per_s"`
	PeakPerS float64               `json:"peak_per_s"`
	Types    []ExceptionTypeJSON   `json:"types"`
	Timeline ExceptionTimelineJSON `json:"timeline"`
	Folded   ExceptionFoldedJSON   `json:"folded"`
	Notes    []string              `json:"notes"`
}

// ExceptionTypeJSON is one exception type.
type ExceptionTypeJSON struct {
	Type       string                   `json:"type"`
	Count      int64                    `json:"count"`
	Caught     int64                    `json:"caught"`
	Uncaught   int64                    `json:"uncaught"`
	Patterns   []ExceptionPatternJSON   `json:"patterns"`
	ThrowSites []ExceptionThrowSiteJSON `json:"throw_sites"`
	CatchSites []ExceptionCatchSiteJSON `json:"catch_sites"`
}

// ExceptionPatternJSON is a folded message.
type ExceptionPatternJSON struct {
	Pattern string `json:"pattern"`
	Example string `json:"example"`
	Count   int64  `json:"count"`
}

// ExceptionThrowSiteJSON is the throwing from one stack, frames leaf first.
type ExceptionThrowSiteJSON struct {
	Site  string   `json:"site"`
	Stack []string `json:"stack"`
	Count int64    `json:"count"`
}

// ExceptionCatchSiteJSON is a method that caught the type.
type ExceptionCatchSiteJSON struct {
	Site  string `json:"site"`
	Count int64  `json:"count"`
}

// ExceptionTimelineJSON counts exceptions per bin from the session start.
type ExceptionTimelineJSON struct {
	BinMs  float64 `json:"bin_ms"`
	Counts []int64 `json:"counts"`
}

// ExceptionFoldedJSON counts what went past the analysis' bounds into
// "[other ...]" entries.
type ExceptionFoldedJSON struct {
	Types          int64 `json:"types"`
	Stacks         int64 `json:"stacks"`
	Patterns       int64 `json:"patterns"`
	CatchSites     int64 `json:"catch_sites"`
	LostDispatches int64 `json:"lost_dispatches"`
}

// ExceptionNotes are the caveats of a result, one line each.
func ExceptionNotes(r *exceptions.Result) []string {
	var n []string
	if r.Thrown > 0 && !r.HandlingEvents {
		n = append(n, "no catch or end-of-dispatch events: catch sites and caught/uncaught are unknown (the runtime or the session did not send them)")
	}
	if r.CatchesWithoutThrow > 0 || r.StopsWithoutThrow > 0 {
		n = append(n, fmt.Sprintf("%d catches and %d dispatch ends of exceptions thrown before the session began", r.CatchesWithoutThrow, r.StopsWithoutThrow))
	}
	if r.Open > 0 {
		n = append(n, fmt.Sprintf("%d exceptions were still being dispatched when the stream ended (an unhandled exception that ended the process is one)", r.Open))
	}
	if f := r.FoldedTypes + r.FoldedStacks + r.FoldedPatterns + r.FoldedCatchSites; f > 0 {
		n = append(n, fmt.Sprintf("bounded memory: %d types, %d stacks, %d messages and %d catches were counted under [other ...] entries", r.FoldedTypes, r.FoldedStacks, r.FoldedPatterns, r.FoldedCatchSites))
	}
	if r.LostDispatches > 0 {
		n = append(n, fmt.Sprintf("%d open exceptions were forgotten (nesting deeper than the bound, or too many threads)", r.LostDispatches))
	}
	return n
}

// NewExceptionsDocument builds the JSON document; span is the stream's
// length.
func NewExceptionsDocument(in Input, r *exceptions.Result, span time.Duration) *ExceptionsDocument {
	d := &ExceptionsDocument{Input: in,
		Thrown: r.Thrown, Rethrown: r.Rethrown, Nested: r.Nested,
		Caught: r.Caught, Uncaught: r.Uncaught, OpenAtEnd: r.Open,
		FinallyRuns: r.Finallys, FilterRuns: r.Filters, HandlingEvents: r.HandlingEvents,
		SpanMs: float64(span) / 1e6,
		Types:  []ExceptionTypeJSON{},
		Timeline: ExceptionTimelineJSON{BinMs: float64(r.Timeline.BinNs) / 1e6,
			Counts: append([]int64{}, r.Timeline.Counts...)},
		Folded: ExceptionFoldedJSON{Types: r.FoldedTypes, Stacks: r.FoldedStacks, Patterns: r.FoldedPatterns,
			CatchSites: r.FoldedCatchSites, LostDispatches: r.LostDispatches},
		Notes: append([]string{}, ExceptionNotes(r)...),
	}
	if span > 0 {
		d.RatePerS = float64(r.Thrown) / span.Seconds()
	}
	if peak, _ := r.Timeline.Peak(); r.Timeline.BinNs > 0 {
		d.PeakPerS = float64(peak) / (float64(r.Timeline.BinNs) / 1e9)
	}
	for _, t := range r.Types {
		tj := ExceptionTypeJSON{Type: t.Name, Count: t.Count, Caught: t.Caught, Uncaught: t.Uncaught,
			Patterns: []ExceptionPatternJSON{}, ThrowSites: []ExceptionThrowSiteJSON{}, CatchSites: []ExceptionCatchSiteJSON{}}
		for _, p := range t.Patterns {
			tj.Patterns = append(tj.Patterns, ExceptionPatternJSON{Pattern: p.Pattern, Example: p.Example, Count: p.Count})
		}
		for _, s := range t.ThrowSites {
			tj.ThrowSites = append(tj.ThrowSites, ExceptionThrowSiteJSON{Site: s.Site,
				Stack: append([]string{}, r.Stacks[s.Stack].Frames...), Count: s.Count})
		}
		for _, c := range t.CatchSites {
			tj.CatchSites = append(tj.CatchSites, ExceptionCatchSiteJSON{Site: c.Site, Count: c.Count})
		}
		d.Types = append(d.Types, tj)
	}
	return d
}

// WriteExceptionsJSON writes the document as indented JSON.
func WriteExceptionsJSON(w io.Writer, d *ExceptionsDocument) error {
	return writeJSON(w, d, false)
}

// exceptionsTop is how many patterns, sites and frames the text report
// prints per type (the JSON document has them all).
const exceptionsTop = 5

// WriteExceptionsText writes the human-readable report.
func WriteExceptionsText(w io.Writer, in Input, r *exceptions.Result, span time.Duration) error {
	ew := &lockErrWriter{w: w}
	if l := in.PartialLine(); l != "" {
		fmt.Fprintln(ew, l)
	}
	d := NewExceptionsDocument(in, r, span)
	fmt.Fprintf(ew, "Exceptions in %s\n", in.Source)
	peak, _ := r.Timeline.Peak()
	fmt.Fprintf(ew, "  %d thrown (first chance) in %.3fs: %.1f/s, at most %d in one %s\n",
		r.Thrown, span.Seconds(), d.RatePerS, peak, time.Duration(r.Timeline.BinNs))
	if r.HandlingEvents {
		fmt.Fprintf(ew, "  %d caught, %d left managed code uncaught, %d still in dispatch at the end; %d finally and %d filter runs\n",
			r.Caught, r.Uncaught, r.Open, r.Finallys, r.Filters)
	}
	for _, t := range r.Types {
		fmt.Fprintf(ew, "\n%s: %d", t.Name, t.Count)
		if r.HandlingEvents {
			fmt.Fprintf(ew, " (%d caught, %d uncaught)", t.Caught, t.Uncaught)
		}
		fmt.Fprintln(ew)
		writeTop(ew, "  messages:", len(t.Patterns), "patterns", func(i int) {
			fmt.Fprintf(ew, "    %8d  %q\n", t.Patterns[i].Count, t.Patterns[i].Pattern)
		})
		callers := distinctCallers(t.ThrowSites, r.Stacks)
		writeTop(ew, "  thrown from:", len(t.ThrowSites), "stacks", func(i int) {
			s := t.ThrowSites[i]
			fmt.Fprintf(ew, "    %8d  %s%s\n", s.Count, s.Site, callers[i])
			if i == 0 {
				writeLockFrames(ew, r.Stacks[s.Stack].Frames)
			}
		})
		writeTop(ew, "  caught in:", len(t.CatchSites), "catch sites", func(i int) {
			fmt.Fprintf(ew, "    %8d  %s\n", t.CatchSites[i].Count, t.CatchSites[i].Site)
		})
	}
	if len(r.Timeline.Counts) > 1 {
		fmt.Fprintf(ew, "\nper %s:", time.Duration(r.Timeline.BinNs))
		for _, c := range r.Timeline.Counts {
			fmt.Fprintf(ew, " %d", c)
		}
		fmt.Fprintln(ew)
	}
	for _, n := range ExceptionNotes(r) {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	return ew.err
}

// maxCallers bounds the caller chain that tells two rows of one throw
// site apart.
const maxCallers = 4

// distinctCallers tells apart the rows of one type's throw sites that
// name the same site (the same method thrown from by different callers):
// for each such row, " ← caller ← caller" up to the first caller that
// differs from every other row of the site (at most maxCallers); "" for a
// site named once.
func distinctCallers(sites []exceptions.ThrowSite, stacks []exceptions.Stack) []string {
	out := make([]string, len(sites))
	chains := make([][]string, len(sites))
	bySite := map[string][]int{}
	for i, s := range sites {
		bySite[s.Site] = append(bySite[s.Site], i)
	}
	for i, s := range sites {
		if len(bySite[s.Site]) < 2 || s.Stack < 0 || s.Stack >= len(stacks) {
			continue
		}
		fr := stacks[s.Stack].Frames
		if k := slices.Index(fr, s.Site); k >= 0 {
			chains[i] = fr[k+1:]
		}
	}
	for i, s := range sites {
		same := bySite[s.Site]
		if len(same) < 2 || chains[i] == nil {
			continue
		}
		n := 1
		for ; n < min(maxCallers, len(chains[i])); n++ {
			unique := true
			for _, j := range same {
				if j != i && len(chains[j]) >= n && slices.Equal(chains[j][:n], chains[i][:n]) {
					unique = false
				}
			}
			if unique {
				break
			}
		}
		n = min(n, len(chains[i]))
		if n > 0 {
			out[i] = " ← " + strings.Join(chains[i][:n], " ← ")
		}
	}
	return out
}

// writeTop writes title and the first exceptionsTop of a list of n
// entries (line writes entry i), then how many more there are; nothing
// for an empty list.
func writeTop(w io.Writer, title string, n int, more string, line func(i int)) {
	if n == 0 {
		return
	}
	fmt.Fprintln(w, title)
	for i := range min(n, exceptionsTop) {
		line(i)
	}
	if n > exceptionsTop {
		fmt.Fprintf(w, "    ... %d more %s\n", n-exceptionsTop, more)
	}
}

// ExceptionsProfile builds a pprof profile of exceptions by throw stack
// (the runtime's dispatcher frames left out):
// sample type exceptions/count, one sample per (type, stack) with the
// type as a label, so `go tool pprof -tagfocus type=...` selects one.
func ExceptionsProfile(r *exceptions.Result, start time.Time, span time.Duration) *profile.Profile {
	p := &profile.Profile{
		SampleType:    []*profile.ValueType{{Type: "exceptions", Unit: "count"}},
		PeriodType:    &profile.ValueType{Type: "exceptions", Unit: "count"},
		Period:        1,
		TimeNanos:     start.UnixNano(),
		DurationNanos: int64(span),
	}
	locs := newPprofLocs(p)
	for _, t := range r.Types {
		for _, s := range t.ThrowSites {
			st := r.Stacks[s.Stack]
			sl := locs.stack(st.IPs, st.Frames, st.Modules, exceptions.NoStack, skipEHLeaf)
			p.Sample = append(p.Sample, &profile.Sample{Location: sl, Value: []int64{s.Count},
				Label: map[string][]string{"type": {t.Name}}})
		}
	}
	return p
}

// skipEHLeaf leaves out the runtime's exception dispatcher (.NET 9+:
// managed code under System.Runtime.EH), the leaf of every throw stack, so
// the leaf is the throwing method.
func skipEHLeaf(kept int, frame string) bool {
	return kept == 0 && strings.HasPrefix(frame, "System.Runtime.EH.")
}

// WriteExceptionsPprof writes the profile as gzipped protobuf; a partial
// input says so in the profile's comments.
func WriteExceptionsPprof(w io.Writer, in Input, r *exceptions.Result, start time.Time, span time.Duration) error {
	p := ExceptionsProfile(r, start, span)
	if l := in.PartialLine(); l != "" {
		p.Comments = append(p.Comments, l)
	}
	return p.Write(w)
}
