package analysis_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// The library in ten lines: open a stream (a file here; source.Spec{Pid:
// pid, Providers: clrevents.ProvidersFor(gcpause.Wants)} attaches to a
// running process instead), feed it to an analysis, read the result. The
// trace is the workload's gc-wks run, whose own count is the same 40 GCs
// (GC.CollectionCount: 40 of gen0 or higher, 13 of gen1 or higher, 5 of
// gen2; testdata/traces/gc-wks.workload.json).
func Example() {
	st, err := source.Open(source.Spec{File: "../testdata/traces/gc-wks.nettrace", Keep: gcpause.Wants})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	gc := gcpause.New(st.Header(), gcpause.Options{})
	end, err := st.Run(gc)
	if err != nil {
		log.Fatal(err)
	}
	r := gc.Result()
	fmt.Printf("%d GCs: gen0 %d, gen1 %d, gen2 %d; p99 pause %.1f ms; events lost %d\n",
		r.All.Count, r.ByGen[0].Count, r.ByGen[1].Count, r.ByGen[2].Count, float64(r.All.P99)/1e6, end.EventsLost)
	// Output: 40 GCs: gen0 27, gen1 8, gen2 5; p99 pause 14.3 ms; events lost 0
}

// One level down: the nettrace reader hands out events in timestamp
// order, and clrevents decodes the runtime's payloads (here every
// GCStart's condemned generation).
func Example_reader() {
	f, err := os.Open("../testdata/traces/gc-wks.nettrace")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	r, err := nettrace.NewReader(f)
	if err != nil {
		log.Fatal(err)
	}
	var gens [3]int
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			log.Fatal(err)
		}
		if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCStart {
			g, err := clrevents.DecodeGCStart(ev.Payload, ev.Meta.Version, r.Header().PointerSize)
			if err != nil {
				log.Fatal(err)
			}
			gens[min(g.Depth, 2)]++
		}
	}
	fmt.Println("GCStart by generation:", gens)
	// Output: GCStart by generation: [27 8 5]
}
