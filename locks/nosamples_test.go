package locks

import (
	"errors"
	"reflect"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// NoSamples leaves Result.Samples empty and everything else as it is (the
// contention fixture: waits with stacks on several locks and threads).
// Release keeps Stats.
func TestNoSamples(t *testing.T) {
	whole, _ := run(t, tracetest.Path(t, "contention.nettrace"), nil)
	r := tracetest.Open(t, "contention.nettrace", nettrace.NewReader)
	sym := stacks.NewSymbols(r.Header())
	a := New(r.Header(), Options{Symbols: sym, NoSamples: true})
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) { a.Event(ev); sym.Event(ev) }); err != nil && !errors.Is(err, nettrace.ErrTruncated) {
		t.Fatal(err)
	}
	got := a.Result()
	if len(whole.Samples) == 0 || len(got.Samples) != 0 {
		t.Fatalf("%d samples with them, %d without", len(whole.Samples), len(got.Samples))
	}
	got.Samples = whole.Samples
	if !reflect.DeepEqual(got, whole) {
		t.Fatal("the result without samples differs in more than its samples")
	}
	st := a.Stats()
	a.Release()
	if a.Stats() != st || st.Events == 0 {
		t.Fatalf("Stats %+v after Release, %+v before", a.Stats(), st)
	}
}
