package report

import "testing"

func TestSnakeCase(t *testing.T) {
	for in, want := range map[string]string{
		"NonConcurrent": "non_concurrent", "SPBlock": "sp_block", "EventBlock": "event_block", "Trace": "trace",
		"Background": "background", "gen0": "gen0", "SuspendForGCPrep": "suspend_for_gc_prep", "already_snake": "already_snake",
	} {
		if got := SnakeCase(in); got != want {
			t.Errorf("SnakeCase(%q) = %q, want %q", in, got, want)
		}
	}
}
