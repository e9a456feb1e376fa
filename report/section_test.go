package report

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/exceptions"
)

// A section says its formats for --format's help as the commands wrote
// them, and its writers write the format asked for: text for one it does
// not offer.
func TestSections(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ExceptionsSection.Formats(), "text, json or pprof"},
		{ThreadPoolSection.Formats(), "text, json or pprof"},
		{LocksSection.Formats(), "text, json or pprof"},
		{TriageSection.Formats(), "text or json"},
		{HeapSection.Formats(), "text, json or pprof"},
		{StacksSection.Formats(), "text or json"},
		{Section[int]{Text: func(io.Writer, Run, int) error { return nil }}.Formats(), "text"},
	} {
		if c.got != c.want {
			t.Errorf("formats %q, want %q", c.got, c.want)
		}
	}
	res := &exceptions.Result{}
	w := ExceptionsSection.Writers(Run{}, res)
	var text, json, pprof bytes.Buffer
	for _, c := range []struct {
		format string
		b      *bytes.Buffer
	}{{"text", &text}, {"json", &json}, {"pprof", &pprof}} {
		if err := w.Pick(c.format)(c.b); err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
	}
	if !strings.HasPrefix(json.String(), "{") || strings.HasPrefix(text.String(), "{") || pprof.Len() < 2 || pprof.Bytes()[0] != 0x1f || pprof.Bytes()[1] != 0x8b {
		t.Errorf("text %.40q, json %.40q, pprof % x", text.String(), json.String(), pprof.Bytes()[:min(4, pprof.Len())])
	}
	var pp PageParts
	ExceptionsSection.Page(&pp, res)
	if pp.Exceptions != res || ThreadPoolSection.Page != nil {
		t.Errorf("exceptions' page part %p, want the result %p; threadpool's Page set (its part is pageset's: the pool's own first event)", pp.Exceptions, res)
	}
	if !TriageSection.Offers("json") || TriageSection.Offers("pprof") || !ExceptionsSection.Offers("pprof") || ExceptionsSection.Offers("folded") {
		t.Errorf("offers: triage json %v pprof %v, exceptions pprof %v folded %v", TriageSection.Offers("json"), TriageSection.Offers("pprof"),
			ExceptionsSection.Offers("pprof"), ExceptionsSection.Offers("folded"))
	}
	if got, want := ProfileFormatList(), "pprof, speedscope, folded or html"; got != want {
		t.Errorf("profile formats %q, want %q", got, want)
	}
	if f, ok := ProfileFormatNamed("folded"); !ok || f.ForPrograms {
		t.Errorf("folded: %v %+v: a text for people and scripts, written to a terminal too", ok, f)
	}
	if _, ok := ProfileFormatNamed("svg"); ok {
		t.Error("svg is no profile format")
	}
	var tri bytes.Buffer
	d := &TriageDocument{}
	if err := TriageSection.Writers(Run{}, d).Pick("pprof")(&tri); err != nil || strings.HasPrefix(tri.String(), "{") {
		t.Errorf("triage's pprof (not offered) wrote %.40q, %v: want its text", tri.String(), err)
	}
}
