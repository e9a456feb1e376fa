package report

import (
	"io"
	"strings"
	"time"

	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// Run is what a report says of its session besides the analysis' result:
// the input, the first event's wall-clock time and the span to the last.
type Run struct {
	In    Input
	Start time.Time
	Span  time.Duration
}

// Section is one analysis' report in every format it has, registered once
// here (ExceptionsSection, ThreadPoolSection, ...): a new analysis adds a
// section and its command only wires the flags (Formats for --format's
// help, Writers for the writer of the format asked for). A nil writer is a
// format the section does not offer. Page, when set, puts the result on
// the report page (pageset.Analyses.Parts).
type Section[R any] struct {
	Text, JSON, Pprof func(w io.Writer, run Run, r R) error
	Page              func(pp *PageParts, r R)
}

// Formats is the --format help's list of the formats s offers ("text,
// json or pprof").
func (s Section[R]) Formats() string {
	var f []string
	for _, x := range []struct {
		name string
		ok   bool
	}{{"text", s.Text != nil}, {"json", s.JSON != nil}, {"pprof", s.Pprof != nil}} {
		if x.ok {
			f = append(f, x.name)
		}
	}
	return orList(f)
}

// orList is "a, b or c".
func orList(f []string) string {
	if len(f) < 2 {
		return strings.Join(f, "")
	}
	return strings.Join(f[:len(f)-1], ", ") + " or " + f[len(f)-1]
}

// Offers reports whether s writes format.
func (s Section[R]) Offers(format string) bool {
	switch format {
	case "text":
		return s.Text != nil
	case "json":
		return s.JSON != nil
	case "pprof":
		return s.Pprof != nil
	}
	return false
}

// Writers are s's writers of result r of run.
func (s Section[R]) Writers(run Run, r R) Writers {
	bind := func(f func(io.Writer, Run, R) error) func(io.Writer) error {
		if f == nil {
			return nil
		}
		return func(w io.Writer) error { return f(w, run, r) }
	}
	return Writers{Text: bind(s.Text), JSON: bind(s.JSON), Pprof: bind(s.Pprof)}
}

// Writers are one report's writers, a format each (nil: not offered);
// text is the default.
type Writers struct {
	Text, JSON, Pprof func(io.Writer) error
}

// Pick is the writer of format ("text", "json" or "pprof"): text for a
// format the report does not offer.
func (f Writers) Pick(format string) func(io.Writer) error {
	switch {
	case format == "json" && f.JSON != nil:
		return f.JSON
	case format == "pprof" && f.Pprof != nil:
		return f.Pprof
	}
	return f.Text
}

// ExceptionsSection is clrspy exceptions' report.
var ExceptionsSection = Section[*exceptions.Result]{
	Text: func(w io.Writer, run Run, r *exceptions.Result) error {
		return WriteExceptionsText(w, run.In, r, run.Span)
	},
	JSON: func(w io.Writer, run Run, r *exceptions.Result) error {
		return WriteExceptionsJSON(w, NewExceptionsDocument(run.In, r, run.Span))
	},
	Pprof: func(w io.Writer, run Run, r *exceptions.Result) error {
		return WriteExceptionsPprof(w, run.In, r, run.Start, run.Span)
	},
	Page: func(pp *PageParts, r *exceptions.Result) { pp.Exceptions = r },
}

// ThreadPoolSection is clrspy threadpool's report (its page part is
// pageset's: on the page's clock from the pool analysis' first event).
var ThreadPoolSection = Section[*threadpool.Result]{
	Text: func(w io.Writer, run Run, r *threadpool.Result) error {
		return WriteThreadPoolText(w, run.In, r, run.Start)
	},
	JSON: func(w io.Writer, run Run, r *threadpool.Result) error {
		return WriteThreadPoolJSON(w, NewThreadPoolDocument(run.In, r, run.Start))
	},
	Pprof: func(w io.Writer, run Run, r *threadpool.Result) error {
		return WriteThreadPoolPprof(w, run.In, r, run.Start, run.Span)
	},
}

// LocksSection is clrspy locks' report.
var LocksSection = Section[*locks.Result]{
	Text: func(w io.Writer, run Run, r *locks.Result) error { return WriteLocksText(w, run.In, r) },
	JSON: func(w io.Writer, run Run, r *locks.Result) error {
		return WriteLocksJSON(w, NewLocksDocument(run.In, r))
	},
	Pprof: func(w io.Writer, run Run, r *locks.Result) error { return WriteLocksPprof(w, r, run.Start, run.Span) },
	// The lock table is made at once: the result names every waiting
	// stack (7 MB on a 1 GiB trace), the table a hundred.
	Page: func(pp *PageParts, r *locks.Result) { pp.PageLocks = PageLocksOf(r) },
}

// TriageSection is clrspy triage's report (its document made from the
// facts, NewTriageDocument).
var TriageSection = Section[*TriageDocument]{
	Text: func(w io.Writer, _ Run, d *TriageDocument) error { return WriteTriageText(w, d) },
	JSON: func(w io.Writer, _ Run, d *TriageDocument) error { return WriteTriageJSON(w, d) },
}

// HeapReport is clrspy heap's result as its section writes it: the
// tracker's result, its summary, the symbols naming its stacks, how many
// types the text lists (Top) and whether the JSON lists every sampled
// object (Objects).
type HeapReport struct {
	Result  *heap.Result
	Summary *heap.Summary
	Symbols *stacks.Symbols
	Top     int
	Objects bool
}

// HeapSection is clrspy heap's report.
var HeapSection = Section[*HeapReport]{
	Text: func(w io.Writer, run Run, h *HeapReport) error {
		return WriteHeapText(w, NewHeapDocument(run.In, h.Result, h.Summary), h.Top)
	},
	JSON: func(w io.Writer, run Run, h *HeapReport) error {
		d := NewHeapDocument(run.In, h.Result, h.Summary)
		if h.Objects {
			AddHeapObjects(d, h.Result, h.Symbols)
		}
		return WriteHeapJSON(w, d)
	},
	Pprof: func(w io.Writer, _ Run, h *HeapReport) error {
		return WriteHeapPprof(w, h.Result, h.Symbols, h.Result.EndNs)
	},
}

// StacksSection is clrspy stacks' report; StacksFoldedSection writes its
// text folded (one line per distinct stack: --format folded).
var (
	StacksSection = Section[*StacksDocument]{
		Text: func(w io.Writer, _ Run, d *StacksDocument) error { return WriteStacksText(w, d) },
		JSON: func(w io.Writer, _ Run, d *StacksDocument) error { return WriteStacksJSON(w, d) },
	}
	StacksFoldedSection = Section[*StacksDocument]{
		Text: func(w io.Writer, _ Run, d *StacksDocument) error { return WriteStacksFolded(w, d) },
		JSON: StacksSection.JSON,
	}
)

// ProfileFormat is one of clrspy profile's output formats: its --format
// name, whether it is a file for another program (refused on a terminal)
// and its writer.
type ProfileFormat struct {
	Name        string
	ForPrograms bool
	Write       func(w io.Writer, p *stacks.Profile, o ProfileOptions) error
}

// ProfileOptions are what clrspy profile's writers take besides the
// profile.
type ProfileOptions struct {
	Weight  Weight // folded and html
	Threads bool   // folded and html: a root frame per thread
	Title   string // the input's name
	// Speedscope, when set, writes the time-ordered speedscope file of the
	// samples kept as they came (EventedSpeedscope); nil: the sampled one.
	Speedscope func(io.Writer) error
}

// ProfileFormats are clrspy profile's formats, the default first.
var ProfileFormats = []ProfileFormat{
	{"pprof", true, func(w io.Writer, p *stacks.Profile, _ ProfileOptions) error { return WritePprof(w, p) }},
	{"speedscope", true, func(w io.Writer, p *stacks.Profile, o ProfileOptions) error {
		if o.Speedscope != nil {
			return o.Speedscope(w)
		}
		return WriteSpeedscope(w, p, o.Title)
	}},
	{"folded", false, func(w io.Writer, p *stacks.Profile, o ProfileOptions) error {
		return WriteFolded(w, p, FoldedOptions{Weight: o.Weight, Threads: o.Threads})
	}},
	{"html", true, func(w io.Writer, p *stacks.Profile, o ProfileOptions) error {
		return WriteFlameGraph(w, p, FlameOptions{Weight: o.Weight, Threads: o.Threads, Title: o.Title})
	}},
}

// ProfileFormatNamed is the ProfileFormat called name.
func ProfileFormatNamed(name string) (ProfileFormat, bool) {
	for _, f := range ProfileFormats {
		if f.Name == name {
			return f, true
		}
	}
	return ProfileFormat{}, false
}

// ProfileFormatList lists the profile formats for help and errors
// ("pprof, speedscope, folded or html").
func ProfileFormatList() string {
	names := make([]string, len(ProfileFormats))
	for i, f := range ProfileFormats {
		names[i] = f.Name
	}
	return orList(names)
}
