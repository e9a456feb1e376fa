package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/clrspy/clrspy/gcpause"
)

// fmtMS formats milliseconds with the precision clrspy gc uses for pause
// lengths: three decimals below 10 ms, two below 100, one above.
func fmtMS(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// fmtOptMS is fmtMS, or "-" for an absent value.
func fmtOptMS(v gcpause.Opt) string {
	if !v.Valid() {
		return "-"
	}
	return fmtMS(float64(v))
}

// fmtPct formats a percentage: two decimals below 10 %, one above.
func fmtPct(v float64) string {
	if v < 10 {
		return strconv.FormatFloat(v, 'f', 2, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + "%"
}

// fmtBytes formats a size in decimal units (as clrspy gc's MB): 560 B,
// 12.3 kB, 4.5 MB, 1.23 GB.
func fmtBytes(v float64) string {
	switch a := math.Abs(v); {
	case a < 1e3:
		return strconv.FormatFloat(v, 'f', 0, 64) + " B"
	case a < 1e6:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + " kB"
	case a < 1e9:
		return strconv.FormatFloat(v/1e6, 'f', 1, 64) + " MB"
	}
	return strconv.FormatFloat(v/1e9, 'f', 2, 64) + " GB"
}

// fmtOptBytes is fmtBytes, or "-" for an absent value.
func fmtOptBytes(v gcpause.Opt) string {
	if !v.Valid() {
		return "-"
	}
	return fmtBytes(float64(v))
}

// fmtMB is a GC row's size (decimal MB) with one decimal, or "-".
func fmtMB(v gcpause.Opt) string {
	if !v.Valid() {
		return "-"
	}
	return strconv.FormatFloat(float64(v), 'f', 1, 64)
}

// fmtDuration formats an age: 12.3s, 4m05s, 2h03m, 3d04h.
func fmtDuration(sec float64) string {
	switch {
	case sec < 60:
		return strconv.FormatFloat(sec, 'f', 1, 64) + "s"
	case sec < 3600:
		s := int(sec)
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case sec < 86400:
		m := int(sec) / 60
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	}
	h := int(sec) / 3600
	return fmt.Sprintf("%dd%02dh", h/24, h%24)
}

// fmtCount formats a number that may be large: 999, 12.3k, 4.56M.
func fmtCount(v float64) string {
	switch a := math.Abs(v); {
	case a < 1e4:
		if v == math.Trunc(v) {
			return strconv.FormatFloat(v, 'f', 0, 64)
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a < 1e6:
		return strconv.FormatFloat(v/1e3, 'f', 1, 64) + "k"
	case a < 1e9:
		return strconv.FormatFloat(v/1e6, 'f', 2, 64) + "M"
	}
	return strconv.FormatFloat(v/1e9, 'f', 2, 64) + "G"
}

// fmtNanos formats a histogram bound: 100µs, 2ms, 1s.
func fmtNanos(n int64) string {
	switch {
	case n >= 1e9:
		return strconv.FormatFloat(float64(n)/1e9, 'g', -1, 64) + "s"
	case n >= 1e6:
		return strconv.FormatFloat(float64(n)/1e6, 'g', -1, 64) + "ms"
	}
	return strconv.FormatFloat(float64(n)/1e3, 'g', -1, 64) + "µs"
}

// width is the number of terminal cells s takes (escape sequences take
// none). Plain ASCII, most cells of a frame, is counted without parsing.
func width(s string) int {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c < 0x20 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// truncate cuts s to at most w cells, ending with "…" when cut.
func truncate(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if width(s) <= w {
		return s
	}
	return ansi.Truncate(s, w, "…")
}

// padRight pads s with spaces to w cells (cutting it when longer).
func padRight(s string, w int) string {
	s = truncate(s, w)
	if n := w - width(s); n > 0 {
		return s + strings.Repeat(" ", n)
	}
	return s
}

// padLeft right-aligns s in w cells (cutting it when longer).
func padLeft(s string, w int) string {
	s = truncate(s, w)
	if n := w - width(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return s
}

// flow lays items out in lines of at most w cells, two spaces apart, a
// new line whenever the next item does not fit (an item wider than w is
// cut). Each group starts on a new line. Items never split, so a figure
// and its label stay together at any width.
func flow(groups [][]string, w int) []string {
	var out []string
	for _, g := range groups {
		out = pack(out, g, "  ", w)
	}
	return out
}

// pack appends items to out in lines of at most w cells, sep between
// them, a new line whenever the next item does not fit (an item wider
// than w is cut; empty items are skipped).
func pack(out, items []string, sep string, w int) []string {
	line := ""
	for _, it := range items {
		switch {
		case it == "":
		case line == "":
			line = truncate(it, w)
		case width(line)+len(sep)+width(it) <= w:
			line += sep + it
		default:
			out = append(out, line)
			line = truncate(it, w)
		}
	}
	if line != "" {
		out = append(out, line)
	}
	return out
}

// sparkBlocks are the sparkline's levels; zero is a blank.
var sparkBlocks = []rune(" ▁▂▃▄▅▆▇█")

// sparkline draws vs scaled to top (the largest value when top ≤ 0): a
// value above zero gets at least the lowest block, so a short stop stays
// visible next to a long one.
func sparkline(vs []float64, top float64) string {
	if top <= 0 {
		for _, v := range vs {
			top = max(top, v)
		}
	}
	var b strings.Builder
	for _, v := range vs {
		i := 0
		if v > 0 && top > 0 {
			i = int(math.Ceil(v / top * float64(len(sparkBlocks)-1)))
			i = min(max(i, 1), len(sparkBlocks)-1)
		}
		b.WriteRune(sparkBlocks[i])
	}
	return b.String()
}
