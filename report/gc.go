package report

// GC pause report: text tables, histogram, JSON document and PerfView CSV
// for a gcpause.Result.

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
)

func ms(n int64) float64 { return float64(n) / 1e6 }

// fmtMS formats nanoseconds as milliseconds with a precision that suits
// pause lengths.
func fmtMS(n int64) string {
	v := ms(n)
	switch {
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	case v >= 10:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3f", v)
}

// fmtDur formats nanoseconds for histogram edges: 100µs, 2ms, 1s.
func fmtDur(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%gs", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%gms", float64(n)/1e6)
	}
	return fmt.Sprintf("%gµs", float64(n)/1e3)
}

// GCLegend explains the gen column's notation.
const GCLegend = "gen: the generation collected, then N non-concurrent (blocking), B background, F foreground; I induced, i induced (not forced)"

// GCSummaryLine is the one-line summary a GC report starts with: how many
// GCs, the share of time paused, the longest pause and the p99.
func GCSummaryLine(in *Input, res *gcpause.Result) string {
	if res.Started == 0 {
		if in.Live {
			return "no GC happened during the session"
		}
		return "no GC events in this trace (was the GC keyword enabled?)"
	}
	s := fmt.Sprintf("%d GCs, %.2f%% of %.3f s paused", res.Started, res.All.PausePercent, float64(res.SessionNanos)/1e9)
	if len(res.Longest) > 0 {
		g := res.Longest[0]
		s += fmt.Sprintf(", longest %s ms (GC %d, %s), p99 %s ms", fmtMS(g.PauseNanos), g.Number, g.GenerationName(), fmtMS(res.All.P99))
	}
	if res.Incomplete > 0 {
		s += fmt.Sprintf(", %d incomplete", res.Incomplete)
	}
	return s
}

// WriteGCText writes the one-line summary, the rollup by generation, the
// pause histogram, the longest pauses and the runtime suspensions by
// reason as text tables.
func WriteGCText(w io.Writer, in Input, res *gcpause.Result) error {
	return WriteGCTextHits(w, in, res, nil)
}

// WriteGCTextHits is WriteGCText with, when hits is not nil (the stream
// carried request events), a column of the requests each of the longest
// pauses hit (package requests' GC damage, by GC number).
func WriteGCTextHits(w io.Writer, in Input, res *gcpause.Result, hits map[uint32]int64) error {
	var b strings.Builder
	if l := in.PartialLine(); l != "" {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "%s: %s\n\n", in.Source, GCSummaryLine(&in, res))
	if res.Started == 0 && len(res.ByReason) == 0 {
		_, err := io.WriteString(w, b.String())
		return err
	}
	if res.Started > 0 {
		writeGCTables(&b, res, hits)
	}
	writeSuspensions(&b, res)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeGCTables(b *strings.Builder, res *gcpause.Result, hits map[uint32]int64) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "gen\tcount\tinduced\ttotal ms\truntime ms\tmean ms\tmax ms\tp50 ms\tp90 ms\tp99 ms\tp99.9 ms\t% paused\tsuspend ms\tmax susp ms\t")
	row := func(name string, s gcpause.Rollup) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.2f\t%s\t%s\t\n", name, s.Count, s.Induced,
			fmtMS(s.TotalNanos), fmtMS(s.RuntimeNanos), fmtMS(s.MeanNanos), fmtMS(s.MaxNanos), fmtMS(s.P50), fmtMS(s.P90),
			fmtMS(s.P99), fmtMS(s.P999), s.PausePercent, fmtMS(s.TotalSuspend), fmtMS(s.MaxSuspend))
	}
	row("all", res.All)
	for g, s := range res.ByGen {
		row(fmt.Sprint(g), s)
	}
	tw.Flush()
	writeGCNotes(b, res)
	if len(res.ByType) > 0 {
		b.WriteString("\nby type:")
		for _, t := range []clrevents.GCType{clrevents.GCNonConcurrent, clrevents.GCBackground, clrevents.GCForeground} {
			if n := res.ByType[t]; n > 0 {
				fmt.Fprintf(b, " %s %d", t, n)
			}
		}
		b.WriteString("\n")
	}

	if res.All.Count > 0 {
		b.WriteString("\npause histogram\n")
		writeHistogram(b, &res.All.Histogram)
		b.WriteString("\nlongest pauses\n")
		tw = tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "GC\tgen\treason\tstart s\tsuspend ms\tpause ms\truntime ms\tafter MB\t"
		if hits != nil {
			head += "requests hit\t"
		}
		fmt.Fprintln(tw, head)
		for _, g := range res.Longest {
			after := "-"
			if v := g.HeapSizeAfterMB(); v >= 0 {
				after = fmt.Sprintf("%.1f", v)
			}
			rt := "-"
			if g.PauseRuntimeNanos >= 0 {
				rt = fmtMS(g.PauseRuntimeNanos)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.3f\t%s\t%s\t%s\t%s\t", g.Number, g.GenerationName(), g.Reason,
				float64(g.PauseStartNanos)/1e9, fmtMS(g.SuspendNanos), fmtMS(g.PauseNanos), rt, after)
			if hits != nil {
				fmt.Fprintf(tw, "%d\t", hits[g.Number])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		b.WriteString(GCLegend + "\n")
	}
}

func writeSuspensions(b *strings.Builder, res *gcpause.Result) {
	if len(res.ByReason) > 0 {
		b.WriteString("\nruntime suspensions by reason\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "reason\tcount\ttotal ms\tmax ms\tsuspend ms\tmax susp ms\tincomplete\t")
		for _, r := range res.ByReason {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%d\t\n", r.Reason, r.Count, fmtMS(r.TotalNanos),
				fmtMS(r.MaxNanos), fmtMS(r.TotalSuspend), fmtMS(r.MaxSuspend), r.Incomplete)
		}
		tw.Flush()
	}
	if len(res.Suspensions) > 0 {
		b.WriteString("\nnon-GC suspensions\n")
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "reason\tstart s\tthread\tsuspend ms\tpause ms\t")
		for _, s := range res.Suspensions {
			fmt.Fprintf(tw, "%s\t%.3f\t%d\t%s\t%s\t\n", s.Reason, float64(s.StartNanos)/1e9, s.ThreadID,
				fmtMS(max(s.SuspendNanos, 0)), fmtMS(s.PauseNanos))
		}
		tw.Flush()
	}
}

// writeHistogram prints the buckets from the first to the last non-empty
// one, with a bar scaled to the largest.
func writeHistogram(b *strings.Builder, h *analysis.Histogram) {
	first, last, top := -1, -1, 0
	for i, n := range h.Counts {
		if n > 0 {
			if first < 0 {
				first = i
			}
			last = i
			top = max(top, int(n))
		}
	}
	if first < 0 {
		return
	}
	tw := tabwriter.NewWriter(b, 0, 0, 1, ' ', 0)
	for i := first; i <= last; i++ {
		n := int(h.Counts[i])
		lo, hi := h.Bucket(i)
		var label string
		switch {
		case lo == 0:
			label = "< " + fmtDur(hi)
		case hi == 0:
			label = ">= " + fmtDur(lo)
		default:
			label = fmtDur(lo) + " – " + fmtDur(hi)
		}
		bar := 0
		if n > 0 {
			bar = max(1, n*40/top)
		}
		fmt.Fprintf(tw, "  %s\t%6d\t%s\n", label, n, strings.Repeat("█", bar))
	}
	tw.Flush()
}

// writeGCNotes explains the rollup's two definitions and what it left out:
// overlapping stops counted once, GCs whose start preceded the trace.
func writeGCNotes(b *strings.Builder, res *gcpause.Result) {
	if res.All.Count == 0 {
		return
	}
	b.WriteString("total: stopped time, overlapping GC stops counted once; runtime: the runtime's own definition (GC.GetTotalPauseDuration)\n")
	if o := res.All.SumNanos - res.All.TotalNanos; o > 0 {
		fmt.Fprintf(b, "overlapping GC stops: %s ms counted once (the GCs' pauses add up to %s ms)\n", fmtMS(o), fmtMS(res.All.SumNanos))
	}
	if res.All.StartUnseen == 0 {
		return
	}
	var ids []string
	for _, g := range res.GCs {
		if g.Complete && !g.StartSeen {
			ids = append(ids, fmt.Sprintf("GC %d (>= %s ms)", g.Number, fmtMS(g.PauseNanos)))
		}
	}
	fmt.Fprintf(b, "began before the trace: %s; counted in total, not in mean, max or percentiles\n", strings.Join(ids, ", "))
}
