package report

import (
	"errors"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// readTrace opens the trace at path, hands the header to start (which
// returns the per-event function) and reads every event up to the end or
// the cut.
func readTrace(t testing.TB, path string, start func(*nettrace.Header) func(*nettrace.Event)) *nettrace.Header {
	t.Helper()
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	if err := tracetest.ReadAll(t, r, start(r.Header())); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		t.Fatal(err)
	}
	return r.Header()
}

// gcResult analyzes the trace at path as `clrspy gc` does.
func gcResult(t testing.TB, path string) *gcpause.Result {
	t.Helper()
	var a *gcpause.Analyzer
	readTrace(t, path, func(h *nettrace.Header) func(*nettrace.Event) {
		a = gcpause.New(h, gcpause.Options{})
		return a.Event
	})
	return a.Result()
}

// locksOf analyzes the trace at path as `clrspy locks` does.
func locksOf(t *testing.T, path string) (*locks.Result, *nettrace.Header) {
	t.Helper()
	var a *locks.Analyzer
	h := readTrace(t, path, func(h *nettrace.Header) func(*nettrace.Event) {
		sym := stacks.NewSymbols(h)
		a = locks.New(h, locks.Options{Symbols: sym})
		return func(ev *nettrace.Event) {
			a.Event(ev)
			sym.Event(ev)
		}
	})
	return a.Result(), h
}

// replayHeap replays the trace at path as `clrspy heap` does.
func replayHeap(t *testing.T, path string) (*heap.Result, *stacks.Symbols) {
	t.Helper()
	var tr *heap.Tracker
	var sym *stacks.Symbols
	readTrace(t, path, func(h *nettrace.Header) func(*nettrace.Event) {
		tr, sym = heap.New(h, heap.Options{}), stacks.NewSymbols(h)
		return func(ev *nettrace.Event) {
			tr.Event(ev)
			sym.Event(ev)
		}
	})
	tr.Finish()
	return tr.Result(), sym
}

// buildProfile reads the whole trace at path through a stacks.Builder; it
// must be complete and every payload must decode.
func buildProfile(t testing.TB, path string, opts stacks.Options) *stacks.Profile {
	t.Helper()
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	b := stacks.New(r.Header(), opts)
	if err := tracetest.ReadAll(t, r, b.Event); err != nil {
		t.Fatal(err)
	}
	if st := b.Stats(); st.DecodeErrors != 0 {
		t.Fatalf("%d payloads did not decode, first: %v", st.DecodeErrors, st.FirstError)
	}
	return b.Result()
}
