package stacks

import (
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/tracegen"
)

// FuzzBuilder feeds streams made from the input (package tracegen):
// samples of any type on a few threads with stacks from a small pool,
// method loads (runtime and rundown) that name some of the frames, time
// steps of 0–2.55 ms, under the options the input picks (managed only,
// dotnetdiag's semantics, a thread bound, concurrent aggregation): the
// profile must hold together.
func FuzzBuilder(f *testing.F) {
	f.Add(uint8(0), []byte{0, 1, 10, 0, 2, 10, 1, 1, 10, 2, 3, 10, 3, 1, 10})
	f.Add(uint8(2), []byte{4, 0, 0, 0, 1, 10, 5, 0, 0, 1, 2, 10, 1, 2, 10})
	pool := [][]uint64{nil, {0x1010, 0x2010}, {0x2020, 0x3030, 0x1010}, {0x9999}}
	f.Fuzz(func(t *testing.T, opts uint8, data []byte) {
		g := tracegen.New()
		sampler := g.Thread(900)
		for ; len(data) >= 3; data = data[3:] {
			kind, th, step := data[0], uint64(data[1]%5), time.Duration(data[2])*10*time.Microsecond
			sampler.After(step)
			m := clrevents.Method{MethodID: uint64(kind), StartAddress: 0x1000 * uint64(1+th%3), Size: 0x100, Name: "M", Namespace: "N"}
			switch kind % 6 {
			case 4:
				g.Thread(th).MethodLoad(m)
			case 5:
				g.Thread(th).Rundown(clrevents.IDRundownMethodDCEndVerbose, 2, tracegen.AppendMethodVerbose(nil, m))
			default:
				sampler.Stack(pool[int(kind>>4)%len(pool)]...).Sample(th, clrevents.SampleType(kind%4))
			}
		}
		o := Options{ManagedOnly: opts&1 != 0, Concurrent: opts&8 != 0}
		if opts&2 != 0 {
			o.Compat = CompatDotnetdiag
		}
		if opts&4 != 0 {
			o.MaxThreads = 2
		}
		b := New(g.Header(), o)
		g.Run(t, b.Event)
		if err := b.Result().CheckValid(); err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
	})
}
