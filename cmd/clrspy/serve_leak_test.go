package main

import (
	"strings"
	"testing"
)

// TestServeLeakWatchHelp: serve --help says the leak watch's flags, its
// rule and the measured pause (serve.Config.Validate has the flags'
// checks: TestValidateCommand).
func TestServeLeakWatchHelp(t *testing.T) {
	out, err := runCLI(t, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--leak-watch ", "--leak-watch-every duration", "Each snapshot is a BLOCKING gen2 GC and a heap walk", "236 ms for a heap of 1 M objects"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}
