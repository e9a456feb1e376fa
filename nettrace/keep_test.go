package nettrace

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// readKept reads data with opt, returning a fingerprint per event and
// whether Keep (nil: every event) kept it.
func readKept(t *testing.T, data []byte, opt Options) (prints []uint64, kept []bool, lost uint64, st Stats, err error) {
	t.Helper()
	r, err := NewReaderOptions(bytes.NewReader(data), opt)
	if err != nil {
		return nil, nil, 0, Stats{}, err
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			return prints, kept, lost, *r.Stats(), err
		}
		prints = append(prints, print(ev))
		kept = append(kept, opt.Keep == nil || opt.Keep(ev.Meta))
		lost += uint64(ev.LostBefore)
	}
}

// TestKeep: with Options.Keep the reader delivers a subsequence of the
// whole stream that holds every kept event, field for field (LostBefore
// too), and the whole stream's first and last events; Events+Skipped is the
// whole stream's count, and the lost events are the same. On one goroutine
// and three, on every kind of stream, whole and cut.
func TestKeep(t *testing.T) {
	inputs := parallelInputs(t)
	inputs["lossy"] = lossyTrace(t)
	for name, data := range inputs {
		rng := rand.New(rand.NewPCG(uint64(len(data)), 7))
		for _, cut := range []int{len(data), rng.IntN(len(data) + 1)} {
			for fname, keep := range keepFilters {
				for _, threads := range []int{1, 3} {
					checkKeep(t, fmt.Sprintf("%s cut at %d, keep %s, %d threads", name, cut, fname, threads), data[:cut], keep, threads)
				}
			}
		}
	}
}

// FuzzKeep: whatever the bytes, a filtered read is the whole read's
// subsequence with every kept event and the same counts (TestKeep).
func FuzzKeep(f *testing.F) {
	for _, name := range tracetest.Fixtures(f) {
		b, err := os.ReadFile(tracetest.Path(f, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 16<<10)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkKeep(t, "input", data, keepFilters["odd ids"], 1)
		checkKeep(t, "input", data, keepFilters["none"], 3)
	})
}

var keepFilters = map[string]func(*Metadata) bool{
	"none":    func(*Metadata) bool { return false },
	"odd ids": func(m *Metadata) bool { return m.ID%2 == 1 },
	"runtime": func(m *Metadata) bool { return m.Runtime == Runtime && m.EventID < 20 },
}

// checkKeep compares a read of data filtered by keep with the whole read.
func checkKeep(t *testing.T, what string, data []byte, keep func(*Metadata) bool, threads int) {
	t.Helper()
	all, _, allLost, allSt, allErr := readKept(t, data, Options{})
	got, kept, lost, st, err := readKept(t, data, Options{Keep: keep, Threads: threads})
	if fmt.Sprint(err) != fmt.Sprint(allErr) {
		t.Fatalf("%s: ended with %v, the whole read with %v", what, err, allErr)
	}
	if st.Events+st.Skipped != allSt.Events || st.Events != uint64(len(got)) {
		t.Fatalf("%s: %d delivered + %d skipped, the whole read %d", what, st.Events, st.Skipped, allSt.Events)
	}
	if lost != allLost || st.LostEvents != allSt.LostEvents {
		t.Fatalf("%s: lost %d (stats %d), the whole read %d (%d)", what, lost, st.LostEvents, allLost, allSt.LostEvents)
	}
	// The counts of every event read (Summarize, AllWithStack,
	// AllUnresolved) are those of the whole read, whatever Keep rejects.
	added, whole := summaries(t, data, Options{})
	sum, filtered := summaries(t, data, Options{Keep: keep, Threads: threads})
	if a, b := fmt.Sprint(sum.Counts()), fmt.Sprint(added.Counts()); a != b {
		t.Fatalf("%s: Summarize counted\n%s\nAdd on the whole read\n%s", what, a, b)
	}
	if filtered.AllWithStack != allSt.EventsWithStack || filtered.AllUnresolved != allSt.UnresolvedStacks ||
		whole.AllWithStack != allSt.EventsWithStack || whole.AllUnresolved != allSt.UnresolvedStacks {
		t.Fatalf("%s: %d/%d with a stack, %d/%d unresolved (filtered/whole), the whole read %d, %d", what,
			filtered.AllWithStack, whole.AllWithStack, filtered.AllUnresolved, whole.AllUnresolved, allSt.EventsWithStack, allSt.UnresolvedStacks)
	}
	if len(all) == 0 {
		return
	}
	if got[0] != all[0] || got[len(got)-1] != all[len(all)-1] {
		t.Fatalf("%s: the first or last event is not the whole read's", what)
	}
	// Subsequence, and every event Keep keeps is in it.
	j := 0
	for i, p := range got {
		for j < len(all) && all[j] != p {
			j++
		}
		if j == len(all) {
			t.Fatalf("%s: event %d is not in the whole read after the ones before it", what, i)
		}
		j++
	}
	nKept := 0
	for _, k := range kept {
		if k {
			nKept++
		}
	}
	if want := countKept(t, data, keep); nKept != want {
		t.Fatalf("%s: %d kept events delivered, the stream has %d", what, nKept, want)
	}
}

// summaries reads data with opt to its end, returning the reader's
// Summarize with the stats; with Keep nil the Summary is Add's on every
// event instead.
func summaries(t *testing.T, data []byte, opt Options) (*Summary, Stats) {
	t.Helper()
	sum := NewSummary()
	r, err := NewReaderOptions(bytes.NewReader(data), opt)
	if err != nil {
		return sum, Stats{}
	}
	defer r.Close()
	for {
		ev, err := r.Next()
		if err != nil {
			break
		}
		if opt.Keep == nil {
			sum.Add(ev)
		}
	}
	if opt.Keep != nil {
		r.Summarize(sum)
	}
	return sum, *r.Stats()
}

// lossyTrace is a stream whose threads' sequence numbers jump now and then
// (lost events), inside runs of one thread's events and between them.
func lossyTrace(t *testing.T) []byte {
	evs := random(20000, 3, 11)
	rng := rand.New(rand.NewPCG(11, 2))
	seq := map[uint64]uint32{}
	for i := range evs {
		s := seq[evs[i].CaptureThreadID] + 1
		if rng.IntN(25) == 0 {
			s += uint32(1 + rng.IntN(5))
		}
		seq[evs[i].CaptureThreadID] = s
		evs[i].SequenceNumber = s
	}
	return writeAll(t, evs, WriterOptions{BlockSize: 4096})
}

// countKept counts the events of data keep keeps.
func countKept(t *testing.T, data []byte, keep func(*Metadata) bool) int {
	t.Helper()
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ev, err := r.Next(); err == nil; ev, err = r.Next() {
		if keep(ev.Meta) {
			n++
		}
	}
	return n
}

// TestKeepDropsRuns: on the generated trace (samples and allocations on 64
// threads) a filter that keeps nothing delivers a small fraction of the
// events: two per run of one thread's events in a chunk.
func TestKeepDropsRuns(t *testing.T) {
	gen := generated(t, 4<<20, 3)
	_, _, _, st, err := readKept(t, gen, Options{Keep: func(*Metadata) bool { return false }})
	if err.Error() != "EOF" {
		t.Fatal(err)
	}
	t.Logf("delivered %d, skipped %d", st.Events, st.Skipped)
	if st.Events*10 > st.Skipped {
		t.Fatalf("delivered %d of %d events with nothing kept", st.Events, st.Events+st.Skipped)
	}
}
