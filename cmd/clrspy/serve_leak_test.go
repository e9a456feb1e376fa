package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/serve"
)

// TestServeLeakWatchFlags: the leak watch is on by default with serve's
// flag defaults (5 min window and start-up, 10 %, one pair per 6 h);
// --leak-watch=false and an explicit --snapshot-on-gen2-growth 0 turn it
// off; bad values are one line naming the flag.
func TestServeLeakWatchFlags(t *testing.T) {
	def := func() serve.Config {
		return serve.Config{LeakWatch: serve.LeakWatch{Window: 5 * time.Minute, Growth: 10, Every: 6 * time.Hour}}
	}
	c := def()
	if err := resolveLeakWatch(&c, true, false); err != nil || c.LeakWatch.Off || c.LeakWatch.Settle != 5*time.Minute {
		t.Errorf("default: %v, %+v", err, c.LeakWatch)
	}
	c = def()
	if resolveLeakWatch(&c, false, false); !c.LeakWatch.Off {
		t.Error("--leak-watch=false: on")
	}
	c = def()
	if resolveLeakWatch(&c, true, true); !c.LeakWatch.Off {
		t.Error("--snapshot-on-gen2-growth 0: on")
	}
	c = def()
	c.SnapshotOnGen2Growth = 25
	if resolveLeakWatch(&c, true, true); c.LeakWatch.Off {
		t.Error("--snapshot-on-gen2-growth 25: the default watch is off (the eager one replaces it in serve, not here)")
	}
	for _, b := range []struct {
		set  func(*serve.LeakWatch)
		want string
	}{
		{func(l *serve.LeakWatch) { l.Window = 0 }, "--leak-watch-window 0s: must be positive"},
		{func(l *serve.LeakWatch) { l.Every = -time.Hour }, "--leak-watch-every -1h0m0s: must be positive"},
		{func(l *serve.LeakWatch) { l.Growth = 0 }, "--leak-watch-growth 0: a percentage, positive"},
		{func(l *serve.LeakWatch) { l.Growth = math.NaN() }, "--leak-watch-growth NaN: a percentage, positive"},
	} {
		c := def()
		b.set(&c.LeakWatch)
		if err := resolveLeakWatch(&c, true, false); err == nil || err.Error() != b.want {
			t.Errorf("%v, want %q", err, b.want)
		}
		// Off, the values do not matter.
		c.LeakWatch.Off = false
		if err := resolveLeakWatch(&c, false, false); err != nil {
			t.Errorf("off: %v", err)
		}
	}
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
