package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/stacks"
)

// TestWritePprofEqualsModel: the streamed encoder writes the profile that
// github.com/google/pprof's own model of it (pprofModel) writes: both
// parsed back by pprof print the same, sample for sample, on every
// complete fixture (with and without samples, with notes).
func TestWritePprofEqualsModel(t *testing.T) {
	for _, name := range tracetest.Fixtures(t) {
		if strings.Contains(name, ".truncated") {
			continue // buildProfile wants a whole trace
		}
		p := buildProfile(t, tracetest.Path(t, name), stacks.Options{})
		p.Notes = append(p.Notes, "a note")
		var got, want bytes.Buffer
		if err := WritePprof(&got, p); err != nil {
			t.Fatal(err)
		}
		if err := pprofModel(p).Write(&want); err != nil {
			t.Fatal(err)
		}
		gp, err := profile.Parse(&got)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := gp.CheckValid(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		wp, err := profile.Parse(&want)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := gp.String(), wp.String(); g != w {
			t.Errorf("%s: streamed profile differs from the model's:\n%s", name, firstDiff(g, w))
		}
		if gp.DefaultSampleType != wp.DefaultSampleType || strings.Join(gp.Comments, "|") != strings.Join(wp.Comments, "|") || len(gp.Sample) != len(p.Samples) {
			t.Errorf("%s: default %q comments %q samples %d; model %q %q, %d samples", name, gp.DefaultSampleType, gp.Comments, len(gp.Sample), wp.DefaultSampleType, wp.Comments, len(p.Samples))
		}
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + al[i] + "\nwant " + bl[i]
		}
	}
	return "lengths differ"
}
