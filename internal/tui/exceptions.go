package tui

import (
	"fmt"
	"strconv"
)

// exceptionsPanel: the types thrown most since the session began, each
// with its top throw sites (the monitor's bounded summary).
func (m *Model) exceptionsPanel(sc *Screen, W, h int) []string {
	lines := []string{m.st.section.Render("exceptions")}
	if sc.Exceptions == nil {
		return append(lines, wrapWords("Exceptions are off: start clrspy top with --exceptions (the runtime's exception events with their stacks).", W)...)
	}
	e := sc.Exceptions
	lines = append(lines, flow([][]string{{fmt.Sprintf("thrown %d", e.Thrown), fmt.Sprintf("caught %d", e.Caught),
		fmt.Sprintf("uncaught %d", e.Uncaught), fmt.Sprintf("in dispatch %d", e.Open)}}, W)...)
	cols := []column{{"count", 9, true, 0, 0}, {"type / throw site", 0, false, 0, 0}}
	cols[1].w = max(W-11, 10)
	lines = append(lines, m.st.dim.Render(headerLine(cols)))
	if len(e.Types) == 0 {
		return append(lines, m.st.dim.Render("no exception yet"))
	}
	for _, t := range e.Types {
		if len(lines) >= h {
			break
		}
		lines = append(lines, cols[0].cell(strconv.FormatInt(t.Count, 10))+"  "+truncate(t.Type, cols[1].w))
		for _, s := range t.ThrowSites {
			if len(lines) >= h {
				break
			}
			lines = append(lines, m.st.dim.Render(cols[0].cell(strconv.FormatInt(s.Count, 10))+"    "+truncate(s.Site, cols[1].w-2)))
		}
	}
	return lines
}
