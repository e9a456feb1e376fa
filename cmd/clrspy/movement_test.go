package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// TestMovementNote: the keyword that lengthens GC pauses is named
// wherever it is on: a live record that asks for it (--profile movement;
// --profile all leaves it out), and gc and report on a trace file that
// holds its events (heap-alloc was recorded with alloc,movement; gc-wks
// with gc only).
func TestMovementNote(t *testing.T) {
	const live, file = "GC survival and movement keyword makes every GC slower", "recorded with the GC survival and movement keyword on"
	traces := "../../testdata/traces/"
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"gc", "--level", "none", traces + "heap-alloc.nettrace"}, true},
		{[]string{"gc", "--level", "none", traces + "gc-wks.nettrace"}, false},
		{[]string{"report", "-o", filepath.Join(t.TempDir(), "r.html"), traces + "heap-alloc.nettrace"}, true},
	} {
		_, stderr, code := clrspyRun(t, c.args...)
		if code != 0 || strings.Contains(stderr, file) != c.want {
			t.Errorf("%v: exit %d, note %v, want %v:\n%s", c.args, code, strings.Contains(stderr, file), c.want, stderr)
		}
	}
	for _, c := range []struct {
		profile string
		want    bool
	}{{"all", false}, {"gc,movement", true}} {
		out := filepath.Join(t.TempDir(), "m.nettrace")
		argv := workload.Argv(t, "churn", "iterations=200")
		_, stderr, code := clrspyRun(t, append([]string{"record", "--profile", c.profile, "-o", out, "--"}, argv...)...)
		if code != 0 || strings.Contains(stderr, live) != c.want {
			t.Errorf("record --profile %s: exit %d, note %v, want %v:\n%s", c.profile, code, strings.Contains(stderr, live), c.want, stderr)
		}
	}
}
