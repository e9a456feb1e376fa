package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/monitor"
)

// Layout constants.
const (
	// sideMinWidth is the narrowest terminal that gets the counters as a
	// side panel; narrower ones get them as flowing lines.
	sideMinWidth = 120
	// sideWidth is the side panel's width (without its separator).
	sideWidth = 34
	// sideSep separates the main column from the side panel.
	sideSep = " │ "
	// maxCompactCounterLines bounds the counters on a narrow terminal.
	maxCompactCounterLines = 2
	// minTableLines: a title, the column header and one row.
	minTableLines = 3
)

// frame builds the screen data of s and renders it. The rows of the GC
// table are cut to those that fit, in both.
func (m *Model) frame(s *monitor.Snapshot, hist []sample, frozen bool) (*Screen, []string) {
	W, H := m.width, m.height
	if s == nil {
		lines := m.titleBar([]string{"clrspy top", "waiting for the first events…"}, W)
		return nil, append(lines, m.footer(W))
	}
	sc := m.buildScreen(s, hist, frozen)
	if l := m.latest; l != nil && l != s {
		// Frozen: the data stays, the session's state is the latest.
		sc.State, sc.Message = string(l.Session.State), stateMessage(l)
	}
	if lost := s.Session.EventsLost; lost > 0 {
		sc.Notes = append(sc.Notes, fmt.Sprintf("%d events lost: the runtime's buffer overflowed, figures miss what they carried", lost))
	}

	top := m.header(sc, W)
	top = append(top, m.status(sc, W)...)
	footer := m.footer(W)
	avail := H - len(top) - 1
	side := W >= sideMinWidth
	mainW := W
	if side {
		mainW = W - sideWidth - width(sideSep)
	}

	// The bottom block (histogram, timeline) and, on a narrow terminal,
	// the counters, take their lines first; the table takes the rest and
	// they give way, least important first, when the table would drop
	// below minTableLines.
	histo := m.histogram(sc, mainW)
	spark := m.timeline(sc, mainW, H >= 40)
	var compact []string
	if !side {
		compact = m.countersCompact(sc, W)
	}
	shrink := func() bool {
		switch {
		case len(spark) > 1:
			spark = spark[:1]
		case len(histo) > 0:
			histo = nil
		case len(compact) > 1:
			compact = compact[:1]
		case len(spark) > 0:
			spark = nil
		case len(compact) > 0:
			compact = nil
		default:
			return false
		}
		return true
	}
	for avail-len(histo)-len(spark)-len(compact) < minTableLines && shrink() {
	}
	tableH := max(avail-len(histo)-len(spark)-len(compact), 0)

	var main []string
	if m.showHlp {
		main = fit(m.helpLines(mainW), tableH+len(histo)+len(spark))
		histo, spark = nil, nil
	} else {
		main = m.panelLines(sc, mainW, tableH)
		// Empty lines keep the bottom block in place as the table fills.
		for len(main) < tableH {
			main = append(main, "")
		}
		main = append(main, histo...)
		main = append(main, spark...)
	}
	if side {
		right := m.countersSide(sc)
		for i := range main {
			r := ""
			if i < len(right) {
				r = right[i]
			}
			main[i] = padRight(main[i], mainW) + m.st.dim.Render(sideSep) + r
		}
	}
	lines := append(top, compact...)
	lines = append(lines, main...)
	lines = append(lines, footer)
	if sc.Panel != "gcs" || m.showHlp {
		sc.Rows = []Row{}
	}
	return sc, lines
}

// clip joins the frame's lines, at most h of them, each cut to w cells.
// The layout fits from minWidth x minHeight up; below, clip keeps the
// terminal from wrapping.
func clip(lines []string, w, h int) string {
	lines = fit(lines, h)
	for i, l := range lines {
		lines[i] = truncate(l, w)
	}
	return strings.Join(lines, "\n")
}

// The smallest terminal the layout fits without clip cutting lines.
const (
	minWidth  = 60
	minHeight = 16
)

// fit keeps at most h lines.
func fit(lines []string, h int) []string {
	if len(lines) > h {
		return lines[:max(h, 0)]
	}
	return lines
}

// titleBar flows items into reversed lines the terminal's width.
func (m *Model) titleBar(items []string, W int) []string {
	var out []string
	for _, l := range flow([][]string{items}, W-2) {
		out = append(out, m.st.title.Render(padRight(" "+l, W)))
	}
	return out
}

// header is the title bar (process, runtime, GC flavor, uptime,
// allocation rate) and the GC figures: heap sizes after the last GC,
// GCs per generation, % paused per window, the longest pause.
func (m *Model) header(sc *Screen, W int) []string {
	name := sc.Name
	if name == "" {
		name = "?"
	}
	up := "up " + fmtDuration(sc.UptimeSec)
	if !sc.UptimeFromStart {
		up = "session " + fmtDuration(sc.UptimeSec)
	}
	rt := ".NET ?"
	if sc.RuntimeVersion != "" {
		rt = ".NET " + sc.RuntimeVersion
	}
	alloc := "alloc -"
	if sc.AllocRate.Valid() {
		alloc = "alloc " + fmtBytes(float64(sc.AllocRate)) + "/s"
	}
	lines := m.titleBar([]string{"clrspy top", fmt.Sprintf("%s pid %d", name, sc.Pid), rt, "GC " + sc.GCFlavor, up, alloc}, W)

	heap := []string{m.st.bold.Render("heap") + " after GC " + strconv.FormatUint(uint64(sc.HeapAfterGC), 10)}
	if sc.HeapAfterGC == 0 {
		heap[0] = m.st.bold.Render("heap") + " (no GC yet)"
	}
	h := sc.HeapAfterBytes
	for _, g := range []struct {
		n string
		v gcpause.Opt
	}{{"gen0", h.Gen0}, {"gen1", h.Gen1}, {"gen2", h.Gen2}, {"LOH", h.LOH}, {"POH", h.POH}} {
		heap = append(heap, g.n+" "+fmtOptBytes(g.v))
	}

	c := sc.GCCounts
	counts := fmt.Sprintf("%s gen0 %d  gen1 %d  gen2 %d", m.st.bold.Render("GCs"), c.Gen0, c.Gen1, c.Gen2)
	total := fmt.Sprintf("all %d", c.Total)
	if sc.LastGC > 0 {
		total += fmt.Sprintf(" (last #%d)", sc.LastGC)
	}
	if c.Incomplete > 0 {
		total += fmt.Sprintf(", %d incomplete", c.Incomplete)
	}
	paused := m.st.bold.Render("paused")
	for _, p := range sc.Paused {
		w := "all"
		if p.WindowSec > 0 {
			w = strconv.FormatFloat(p.WindowSec, 'f', -1, 64) + "s"
		}
		paused += " " + w + " " + m.pctStyled(p.GCPausedPercent)
	}
	longest := m.st.bold.Render("longest") + " -"
	if l := sc.Longest; l != nil {
		longest = fmt.Sprintf("%s %s ms (GC %d, %s)", m.st.bold.Render("longest"),
			m.st.severity(m.cfg.severity(l.PauseMS)).Render(strconv.FormatFloat(l.PauseMS, 'f', 3, 64)), l.Number, l.Gen)
	}
	lines = append(lines, flow([][]string{heap, {counts, total, paused, longest}}, W)...)
	return append(lines, m.memoryLine(sc, W)...)
}

// pctStyled colors a paused share: yellow from 5 %, red from 20 %.
func (m *Model) pctStyled(p float64) string {
	s := fmtPct(p)
	switch {
	case p >= 20:
		return m.st.warn.Render(s)
	case p >= 5:
		return m.st.info.Render(s)
	}
	return s
}

// status is the session's state (when not running), frozen, and notes.
func (m *Model) status(sc *Screen, W int) []string {
	var items []string
	if sc.Message != "" {
		items = append(items, m.st.banner.Render(truncate(" "+sc.Message+": q quits ", W)))
	}
	if sc.Frozen {
		items = append(items, m.st.frozen.Render(truncate(" FROZEN: space resumes (collection goes on) ", W)))
	}
	if tp := sc.ThreadPool; tp != nil && tp.Starving {
		items = append(items, m.st.banner.Render(truncate(fmt.Sprintf(" THREAD POOL STARVING since %.1f s: %d threads, queue %s (t) ",
			tp.StarvingSinceSec, tp.Threads, fmtQueue(tp.Queue)), W)))
	}
	if len(sc.Findings) > 0 {
		x := sc.Findings[0]
		more := ""
		if n := len(sc.Findings) - 1; n > 0 {
			more = fmt.Sprintf(" (+%d: clrspy triage)", n)
		}
		items = append(items, m.st.banner.Render(truncate(fmt.Sprintf(" %s %s: %s%s ", strings.ToUpper(x.Severity.String()), x.Area, x.Title, more), W)))
	}
	groups := [][]string{items}
	for _, n := range sc.Notes {
		groups = append(groups, []string{m.st.dim.Render(truncate(n, W))})
	}
	return flow(groups, W)
}

// footer is the keys' help, or the filter being typed.
func (m *Model) footer(W int) string {
	if m.editing {
		in := m.st.key.Render("filter: ") + string(m.input) + m.st.reverse.Render(" ")
		if len(m.input) == 0 {
			in += m.st.dim.Render(" 2, gen2, induced, background, debugger…")
		}
		return truncate(in+m.st.dim.Render("  enter applies, esc cancels"), W)
	}
	m.help.Width = W
	return truncate(m.help.ShortHelpView(m.keys.ShortHelp()), W)
}

// panelLines renders the main panel in h lines at most.
func (m *Model) panelLines(sc *Screen, W, h int) []string {
	var lines []string
	switch m.panel {
	case PanelLocks:
		lines = m.locksPanel(sc, W, h)
	case PanelCPU:
		lines = m.cpuPanel(sc, W, h)
	case PanelExceptions:
		lines = m.exceptionsPanel(sc, W, h)
	case PanelThreadPool:
		lines = m.threadPoolPanel(sc, W, h)
	case PanelRequests:
		lines = m.requestsPanel(sc, W, h)
	default:
		lines = m.gcTable(sc, W, h)
	}
	return fit(lines, h)
}

// column is one table column.
type column struct {
	title string
	w     int
	right bool
	// drop: columns go in increasing drop order when the table is too
	// wide (0: never).
	drop int
	// min: a flexible column shrinks down to min (before the columns of
	// drop order 4 and up go); 0: fixed.
	min int
}

// fitColumns drops and shrinks columns until the table fits W cells.
func fitColumns(cols []column, W int) []column {
	cols = append([]column(nil), cols...)
	total := func() int {
		t := 0
		for _, c := range cols {
			t += c.w + 2
		}
		return t - 2
	}
	for order := 1; order <= 9 && total() > W; order++ {
		if order == 4 {
			for i := range cols {
				if t := total(); cols[i].min > 0 && t > W {
					cols[i].w = max(cols[i].min, cols[i].w-(t-W))
				}
			}
			if total() <= W {
				break
			}
		}
		for i := range cols {
			if cols[i].drop == order {
				cols = append(cols[:i], cols[i+1:]...)
				break
			}
		}
	}
	return cols
}

func (c column) cell(s string) string {
	if c.right {
		return padLeft(s, c.w)
	}
	return padRight(s, c.w)
}

func headerLine(cols []column) string {
	cells := make([]string, len(cols))
	for i, c := range cols {
		cells[i] = c.cell(c.title)
	}
	return strings.Join(cells, "  ")
}

// gcTable is the GC panel: a title saying the order and filter, the
// column header and the rows that fit.
func (m *Model) gcTable(sc *Screen, W, h int) []string {
	cols := []column{
		{"GC", 6, true, 0, 0},
		{"time", 12, false, 5, 0},
		{"gen", 4, false, 0, 0},
		{"type", 13, false, 3, 0},
		{"reason", 18, false, 0, 8},
		{"suspend ms", 10, true, 6, 0},
		{"pause ms", 9, true, 0, 0},
		{"before MB", 9, true, 2, 0},
		{"after MB", 8, true, 4, 0},
		{"promoted MB", 11, true, 1, 0},
	}
	cols = fitColumns(cols, W)
	title := m.st.section.Render("GCs") + fmt.Sprintf(" by %s", map[string]string{"time": "time, newest first",
		"pause": "pause, longest first", "generation": "generation, then newest"}[sc.Sort])
	if sc.Filter != "" {
		title += "  filter " + m.st.key.Render(sc.Filter)
	}
	title += m.st.dim.Render(fmt.Sprintf("  (%d rows)", sc.RowsMatched))
	lines := []string{truncate(title, W), m.st.dim.Render(headerLine(cols))}
	n := max(h-2, 0)
	if len(sc.allRows) == 0 {
		msg := "no GC yet"
		if sc.Filter != "" {
			msg = "no GC or suspension matches the filter"
		}
		if n > 0 {
			lines = append(lines, m.st.dim.Render(msg))
		}
		sc.Rows = []Row{}
		return lines
	}
	sc.Rows = make([]Row, min(n, len(sc.allRows)))
	for i := range sc.Rows {
		sc.Rows[i] = *sc.allRows[i]
		lines = append(lines, m.gcRow(&sc.Rows[i], cols))
	}
	return lines
}

func (m *Model) gcRow(r *Row, cols []column) string {
	// The row is one severity-styled run, but for a slow suspension's
	// cell (three runs): a style per cell would cost most of the frame.
	var b, slowCell strings.Builder
	cur := &b
	var tail strings.Builder
	for i, c := range cols {
		if i > 0 {
			cur.WriteString("  ")
		}
		var v string
		switch c.title {
		case "GC":
			v = "-"
			if r.Kind == "gc" {
				v = strconv.FormatUint(uint64(r.Number), 10)
			}
		case "time":
			v = r.Time.Format("15:04:05.000")
		case "gen":
			v = r.Gen
		case "type":
			v = r.Type
			if r.Kind == "suspension" {
				v = "suspension"
			}
		case "reason":
			v = r.Reason
			if r.Incomplete {
				v += " (incomplete)"
			}
		case "suspend ms":
			v = fmtOptMS(r.SuspendMS)
			if r.SlowSuspend {
				slowCell.WriteString(c.cell(v + "!"))
				cur = &tail
				continue
			}
		case "pause ms":
			v = fmtMS(r.PauseMS)
		case "before MB":
			v = fmtMB(r.PeakMB)
		case "after MB":
			v = fmtMB(r.AfterMB)
		case "promoted MB":
			v = fmtMB(r.PromotedMB)
		}
		cur.WriteString(c.cell(v))
	}
	sev := func(s string) string {
		if r.Severity == "debug" || s == "" {
			return s
		}
		return m.st.severity(r.Severity).Render(s)
	}
	if slowCell.Len() == 0 {
		return sev(b.String())
	}
	return sev(b.String()) + m.st.slow.Render(slowCell.String()) + sev(tail.String())
}

// locksPanel: contention totals and the locks with the longest total
// wait.
func (m *Model) locksPanel(sc *Screen, W, h int) []string {
	lines := []string{m.st.section.Render("lock contention")}
	if sc.Locks == nil {
		return append(lines, wrapWords("Lock contention is off: start clrspy top with --locks (the runtime's contention events).", W)...)
	}
	l := sc.Locks
	sum := flow([][]string{{fmt.Sprintf("contentions %d", l.Contentions), fmt.Sprintf("waits %d", l.Waits),
		"total wait " + fmtMS(l.TotalWaitMS) + " ms", "max " + fmtMS(l.MaxWaitMS) + " ms",
		fmt.Sprintf("waiting now %d", l.Waiting)}}, W)
	lines = append(lines, sum...)
	cols := fitColumns([]column{
		{"lock", 18, false, 0, 0},
		{"object", 18, false, 1, 0},
		{"waits", 8, true, 0, 0},
		{"total ms", 10, true, 0, 0},
		{"max ms", 9, true, 0, 0},
		{"owner thread", 12, true, 2, 0},
	}, W)
	lines = append(lines, m.st.dim.Render(headerLine(cols)))
	if len(l.Top) == 0 {
		return append(lines, m.st.dim.Render("no contended lock yet"))
	}
	for _, r := range l.Top {
		if len(lines) >= h {
			break
		}
		cells := make([]string, 0, len(cols))
		for _, c := range cols {
			var v string
			switch c.title {
			case "lock":
				v = "0x" + strconv.FormatUint(r.LockID, 16)
				if r.LockID == 0 {
					v = "(unnamed)"
				}
			case "object":
				v = "-"
				if r.ObjectType != "" {
					v = r.ObjectType
				} else if r.Object != 0 {
					v = "0x" + strconv.FormatUint(r.Object, 16)
				}
			case "waits":
				v = strconv.FormatUint(r.Waits, 10)
			case "total ms":
				v = fmtMS(r.TotalWaitMS)
			case "max ms":
				v = fmtMS(r.MaxWaitMS)
			case "owner thread":
				v = "-"
				if r.OwnerThreadID != 0 {
					v = strconv.FormatUint(r.OwnerThreadID, 10)
				}
			}
			cells = append(cells, c.cell(v))
		}
		lines = append(lines, m.st.severity(m.cfg.severity(r.MaxWaitMS)).Render(strings.Join(cells, "  ")))
	}
	return lines
}

// cpuPanel: the methods with the most samples in the CPU window.
func (m *Model) cpuPanel(sc *Screen, W, h int) []string {
	lines := []string{m.st.section.Render("top methods")}
	if sc.CPU == nil {
		return append(lines, wrapWords("CPU sampling is off: start clrspy top with --cpu (the runtime's sample profiler, as clrspy profile uses).", W)...)
	}
	c := sc.CPU
	lines[0] += fmt.Sprintf(" by samples, last %s: %d samples (%d since the start)", fmtDuration(c.WindowSec), c.Samples, c.Total)
	lines[0] = truncate(lines[0], W)
	cols := []column{{"self %", 6, true, 0, 0}, {"total %", 7, true, 0, 0}, {"self", 7, true, 0, 0}, {"total", 7, true, 0, 0}, {"method", 0, false, 0, 0}}
	cols[4].w = max(W-(6+7+7+7+8), 10)
	lines = append(lines, m.st.dim.Render(headerLine(cols)))
	if len(c.TopMethods) == 0 {
		return append(lines, m.st.dim.Render("no samples in the window"))
	}
	for _, r := range c.TopMethods {
		if len(lines) >= h {
			break
		}
		name := r.Name
		if r.Module != "" {
			name += " [" + r.Module + "]"
		}
		cells := []string{cols[0].cell(strconv.FormatFloat(r.SelfPercent, 'f', 1, 64)),
			cols[1].cell(strconv.FormatFloat(r.TotalPercent, 'f', 1, 64)),
			cols[2].cell(strconv.FormatInt(r.Self, 10)), cols[3].cell(strconv.FormatInt(r.Total, 10)),
			truncate(name, cols[4].w)}
		lines = append(lines, strings.Join(cells, "  "))
	}
	return lines
}

// histogram is the pause histogram per generation: a column per log
// bucket (clrspy gc's 1-2-5 bounds), from the first bucket any generation
// uses to the last, merged at the low end when the terminal is narrow.
func (m *Model) histogram(sc *Screen, W int) []string {
	const labelW, cellW, countW, maxW = 5, 7, 6, 9
	title := m.st.section.Render("pauses") + " by length"
	if len(sc.Histograms) == 0 || sc.GCCounts.Total == 0 {
		return []string{title + m.st.dim.Render("  (no GC yet)")}
	}
	bounds := &sc.Histograms[0].Pauses
	lo, hi := len(bounds.Counts), -1
	for _, g := range sc.Histograms {
		for i, c := range g.Pauses.Counts {
			if c > 0 {
				lo, hi = min(lo, i), max(hi, i)
			}
		}
	}
	if hi < 0 {
		return []string{title + m.st.dim.Render("  (no GC yet)")}
	}
	fits := max((W-labelW-countW-maxW)/cellW, 1)
	// Merge from the low end: the first column then holds every pause up
	// to its bound.
	first := max(lo, hi-fits+1)
	label := func(i int) string {
		lo, hi := bounds.Bucket(i)
		switch {
		case hi != 0:
			// True under either of the histogram's rules at a bound.
			return "≤" + fmtNanos(hi)
		case bounds.LowerClosed:
			return "≥" + fmtNanos(lo)
		}
		return ">" + fmtNanos(lo)
	}
	lines := []string{}
	var hb strings.Builder
	hb.WriteString(padRight("", labelW))
	for i := first; i <= hi; i++ {
		hb.WriteString(padLeft(label(i), cellW))
	}
	hb.WriteString(padLeft("GCs", countW) + padLeft("max ms", maxW))
	lines = append(lines, title, m.st.dim.Render(hb.String()))
	for _, g := range sc.Histograms {
		var b strings.Builder
		b.WriteString(padRight("gen"+strconv.Itoa(g.Generation), labelW))
		for i := first; i <= hi; i++ {
			var c uint64
			if i == first {
				for j := 0; j <= first; j++ {
					c += g.Pauses.Counts[j]
				}
			} else {
				c = g.Pauses.Counts[i]
			}
			if c == 0 {
				b.WriteString(m.st.dim.Render(padLeft("·", cellW)))
				continue
			}
			low := int64(0)
			if i > first {
				low, _ = bounds.Bucket(i)
			}
			b.WriteString(m.st.severity(m.cfg.severity(float64(low) / 1e6)).Render(padLeft(strconv.FormatUint(c, 10), cellW)))
		}
		b.WriteString(padLeft(strconv.Itoa(g.Count), countW))
		mx := "-"
		if g.Count > 0 {
			mx = fmtMS(g.MaxPauseMS)
		}
		b.WriteString(padLeft(mx, maxW))
		lines = append(lines, b.String())
	}
	return lines
}

// timeline is the sparkline of the share of each refresh period spent
// paused for GCs (and, when tall, of GCs per period), newest right.
func (m *Model) timeline(sc *Screen, W int, tall bool) []string {
	t := &sc.Timeline
	per := fmtPeriod(t.PeriodSec)
	const labelW = 16
	tailW := 26
	n := max(W-labelW-tailW, 4)
	vals := t.GCPausedPercent
	if len(vals) > n {
		vals = vals[len(vals)-n:]
	}
	t.GCPausedPercent = vals
	gcs := t.GCs
	if len(gcs) > n {
		gcs = gcs[len(gcs)-n:]
	}
	t.GCs = gcs
	if len(vals) == 0 {
		return []string{padRight(m.st.section.Render("paused")+" per "+per, labelW) + m.st.dim.Render("(from the second refresh on)")}
	}
	top, now := 0.0, vals[len(vals)-1]
	for _, v := range vals {
		top = max(top, v)
	}
	line := padRight(m.st.section.Render("paused")+" per "+per, labelW) + m.st.info.Render(padLeft(sparkline(vals, 0), n)) +
		truncate(fmt.Sprintf("  now %s max %s", fmtPct(now), fmtPct(top)), tailW)
	out := []string{line}
	if tall {
		fs := make([]float64, len(gcs))
		gtop := 0
		for i, g := range gcs {
			fs[i] = float64(g)
			gtop = max(gtop, g)
		}
		out = append(out, padRight(m.st.section.Render("GCs")+" per "+per, labelW)+padLeft(sparkline(fs, 0), n)+
			truncate(fmt.Sprintf("  now %d max %d", gcs[len(gcs)-1], gtop), tailW))
	}
	return out
}

func fmtPeriod(sec float64) string {
	d := time.Duration(sec * float64(time.Second))
	if d%time.Second == 0 {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', -1, 64) + "ms"
}

// countersSide is the runtime's counters as a side panel.
func (m *Model) countersSide(sc *Screen) []string {
	lines := []string{m.st.section.Render("runtime counters")}
	if !sc.HasCounters {
		return append(lines, m.st.dim.Render(noCounters(sc)))
	}
	for _, c := range sc.Counters {
		lines = append(lines, padRight(c.Label, 18)+padLeft(c.text, sideWidth-18))
	}
	return lines
}

// noCounters says why the counters are missing: not yet (the runtime
// publishes them every second), or not in this session.
func noCounters(sc *Screen) string {
	if sc.State == "running" {
		return "none yet (every 1 s)"
	}
	return "none in this session"
}

// countersCompact is the runtime's counters flowing over a narrow
// terminal's lines (the first maxCompactCounterLines).
func (m *Model) countersCompact(sc *Screen, W int) []string {
	items := []string{m.st.section.Render("counters")}
	if !sc.HasCounters {
		items = append(items, m.st.dim.Render(noCounters(sc)))
	} else {
		for _, c := range sc.Counters {
			if c.text == "-" {
				continue
			}
			items = append(items, c.Label+" "+c.text)
		}
	}
	return fit(flow([][]string{items}, W), maxCompactCounterLines)
}

// helpLines explain the keys and the figures, wrapped to W.
func (m *Model) helpLines(W int) []string {
	c := &m.cfg
	paras := []string{
		m.st.section.Render("keys"),
		"q quit: the session stops cleanly, the target keeps running. space freeze/unfreeze the display (collection goes on). " +
			"g the GC table, l lock contention (--locks), c top methods (--cpu), x exceptions by type and throw site (--exceptions). s sort the GC table by time, pause or generation. " +
			"/ filter the GC table by a generation (2, gen2) or a reason or type (induced, background, debugger); esc clears it. ? this help.",
		m.st.section.Render("GC table"),
		"gen: the generation collected, then N non-concurrent (blocking), B background, F foreground; I induced, i induced (not forced); " +
			"S a runtime suspension that was not a GC's, with its reason.",
		fmt.Sprintf("Pauses from --info %v are yellow, from --warn %v red; ! marks a time to suspend (stop the threads) over --slow-suspend %v.",
			c.info(), c.warn(), c.slowSuspend()),
		"pause: SuspendEEBegin to RestartEEEnd (PerfView's definition, as clrspy gc); a background GC's pause is the sum of its short stops.",
		m.st.section.Render("header"),
		"GCs counts each GC once, under the generation it collected (since clrspy attached; last # is the runtime's own count). " +
			"paused: the share of the last 1, 10 and 60 s and since the start during which the runtime was stopped for GCs, overlapping stops counted once. " +
			"heap: each generation's size after the last GC that reported sizes.",
		m.st.section.Render("runtime counters"),
		"The runtime's own counters. % paused (runtime): the share of time in GC pauses by the runtime's definition (GC.GetTotalPauseDuration). " +
			"pool threads, pool queue, pool work items: the thread pool's threads (ThreadPool.ThreadCount), its queued work items and the work items it completes per second.",
	}
	if c.ThreadPool {
		paras = append(paras, m.st.section.Render("thread pool"),
			"t the thread-pool panel: worker threads now and at most, the queue (the runtime's counter), injections by the pool's reason, "+
				"starvation episodes (100 ms or longer: the pool injecting threads because its threads were blocked), time pool threads spent blocked on locks. "+
				"A red banner shows while the pool starves; clrspy threadpool names the blocking call sites.")
	}
	var out []string
	for _, p := range paras {
		out = append(out, wrapWords(p, W)...)
	}
	return out
}

// wrapWords wraps text at spaces into lines of at most W cells.
func wrapWords(text string, W int) []string {
	return pack(nil, strings.Fields(text), " ", W)
}

func fmtQueue(q float64) string {
	if q < 0 {
		return "-"
	}
	return strconv.FormatFloat(q, 'f', 0, 64)
}

// threadPoolPanel: the pool's threads, queue, injections and starvation.
func (m *Model) threadPoolPanel(sc *Screen, W, h int) []string {
	lines := []string{m.st.section.Render("thread pool")}
	tp := sc.ThreadPool
	if tp == nil {
		return append(lines, wrapWords("The thread pool is not followed: start clrspy top with --threadpool (the runtime's thread-pool events).", W)...)
	}
	threads := "-"
	if tp.Threads >= 0 {
		threads = strconv.Itoa(tp.Threads)
	}
	state := "not starving"
	if tp.Starving {
		state = m.st.warn.Render(fmt.Sprintf("STARVING since %.1f s", tp.StarvingSinceSec))
	}
	lines = append(lines, flow([][]string{{"threads " + threads, fmt.Sprintf("max %d", tp.ThreadsMax), "queue " + fmtQueue(tp.Queue),
		fmt.Sprintf("episodes %d", tp.Episodes), state, fmt.Sprintf("blocked on locks %.3f s", tp.BlockedSec)}}, W)...)
	lines = append(lines, m.st.dim.Render("injections by reason"))
	some := false
	for _, r := range tp.Injections {
		if r.Count == 0 {
			continue
		}
		some = true
		lines = append(lines, fmt.Sprintf("  %-22s %8d", r.Reason, r.Count))
	}
	if !some {
		lines = append(lines, m.st.dim.Render("  none yet"))
	}
	return lines
}
