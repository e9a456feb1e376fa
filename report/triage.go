package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/triage"
)

// TriageDocument is `clrspy triage --json`: the envelope, the findings
// most severe first, and the facts they were judged from.
type TriageDocument struct {
	Input
	WindowSec float64 `json:"window_sec"`
	Runtime   string  `json:"runtime,omitempty"`
	GC        string  `json:"gc_flavor,omitempty"`
	// Worst is the most severe finding's severity; Calm is true when
	// nothing is above info.
	Worst    triage.Severity  `json:"worst"`
	Calm     bool             `json:"calm"`
	Findings []triage.Finding `json:"findings"`
	Facts    *triage.Facts    `json:"facts"`
	Notes    []string         `json:"notes"`
}

// NewTriageDocument judges facts into a document.
func NewTriageDocument(in Input, f *triage.Facts, ri runinfo.Info) *TriageDocument {
	d := &TriageDocument{Input: in, WindowSec: f.WindowSec, Runtime: ri.Runtime, GC: ri.GC, Facts: f,
		Findings: triage.Findings(f), Notes: []string{}}
	if d.Findings == nil {
		d.Findings = []triage.Finding{}
	}
	d.Worst = triage.Worst(d.Findings)
	d.Calm = d.Worst == triage.Info
	for _, a := range triage.Areas {
		if !slices.ContainsFunc(d.Findings, func(x triage.Finding) bool { return x.Area == a }) {
			d.Notes = append(d.Notes, fmt.Sprintf("no %s figures in this stream", a))
		}
	}
	return d
}

// WriteTriageJSON writes d as indented JSON.
func WriteTriageJSON(w io.Writer, d *TriageDocument) error {
	return writeJSON(w, d, false)
}

// triageWidth is the width the text report fits.
const triageWidth = 100

// WriteTriageText writes the findings first, most severe first, each with
// its evidence and next command, within 100 columns.
func WriteTriageText(w io.Writer, d *TriageDocument) error {
	var b strings.Builder
	if d.Calm {
		fmt.Fprintf(&b, "nothing above info: %s looks calm over %.1f s\n", d.Source, d.WindowSec)
	} else {
		n := 0
		for _, f := range d.Findings {
			if f.Severity > triage.Info {
				n++
			}
		}
		fmt.Fprintf(&b, "%d finding(s) above info in %s over %.1f s\n", n, d.Source, d.WindowSec)
	}
	for _, p := range d.Partial {
		fmt.Fprintf(&b, "PARTIAL: %s\n", p)
	}
	b.WriteByte('\n')
	const indent = "                      "
	for _, f := range d.Findings {
		head := fmt.Sprintf("%-9s %-11s ", strings.ToUpper(f.Severity.String()), f.Area)
		wrap(&b, head, indent, f.Title)
		keys := make([]string, 0, len(f.Evidence))
		for k := range f.Evidence {
			if k != "top_stack" && k != "top_methods" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s=%v", k, f.Evidence[k])
		}
		wrap(&b, indent, indent, strings.Join(parts, " "))
		if st, ok := f.Evidence["top_stack"].([]string); ok {
			for i, fr := range st {
				if i == 4 {
					break
				}
				wrap(&b, indent+"  at ", indent+"     ", fr)
			}
		}
		if ms, ok := f.Evidence["top_methods"].([]triage.Method); ok {
			for _, m := range ms {
				wrap(&b, indent+"  ", indent+"    ", fmt.Sprintf("%5.1f%% %s", m.Pct, m.Name))
			}
		}
		wrap(&b, indent+"next: ", indent+"      ", f.Next)
	}
	if len(d.Runtime) > 0 {
		fmt.Fprintf(&b, "\nruntime %s, GC %s\n", d.Runtime, d.GC)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// wrap writes text after first, continuing on lines that start with
// rest, breaking at spaces so no line passes triageWidth (a word longer
// than a line is cut).
func wrap(b *strings.Builder, first, rest, text string) {
	prefix := first
	for {
		room := max(triageWidth-len([]rune(prefix)), 20)
		r := []rune(text)
		if len(r) <= room {
			b.WriteString(prefix + text + "\n")
			return
		}
		cut := strings.LastIndexByte(string(r[:room]), ' ')
		if cut <= 0 {
			cut = len(string(r[:room]))
		}
		b.WriteString(prefix + strings.TrimRight(text[:cut], " ") + "\n")
		text = strings.TrimLeft(text[cut:], " ")
		prefix = rest
	}
}
