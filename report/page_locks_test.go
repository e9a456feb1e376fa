package report

import (
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracegen"
	"github.com/clrspy/clrspy/locks"
)

// TestPageLocksFolded: a table of 44 locks, 43 with one short wait, leads
// with the lock that matters and folds the rest into one line with their
// waits and time (the page's panel is bounded, whatever the count).
func TestPageLocksFolded(t *testing.T) {
	g := tracegen.New()
	th := g.Thread(7)
	at := time.Duration(0)
	for i := 0; i < 20; i++ { // the hot lock: 20 waits of 10 ms
		at += 20 * time.Millisecond
		th.At(at).ContentionStart(0x1000, 0x2000, 0).At(at + 10*time.Millisecond).ContentionStop(10e6)
	}
	for i := 0; i < 43; i++ { // 43 locks with one 100 µs wait each
		at += time.Millisecond
		th.At(at).ContentionStart(0x5000+uint64(i)*16, 0x9000+uint64(i)*16, 0).At(at + 100*time.Microsecond).ContentionStop(1e5)
	}
	a := locks.New(g.Header(), locks.Options{})
	g.Run(t, a.Event)
	pl := PageLocksOf(a.Result())
	if pl == nil || pl.Contentions != 63 || len(pl.Locks) != 3 || pl.Locks[0].Contentions != 20 || pl.Locks[0].TotalMS != 200 ||
		pl.More != 41 || pl.MoreWaits != 41 || pl.MoreMS != 4.1 {
		t.Fatalf("page locks %+v", pl)
	}
	// clrspy locks: every lock a row of the table, the 3 that matter in
	// full, the rest one line.
	var b strings.Builder
	if err := WriteLocksText(&b, Input{Source: "x", Complete: true}, a.Result()); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if n := strings.Count(text, "\nLock 0x"); n != 3 || !strings.Contains(text, "\n41 more locks (41 waits, 4.100ms) are only rows of the table") {
		t.Errorf("%d locks in full:\n%s", n, text)
	}
}
