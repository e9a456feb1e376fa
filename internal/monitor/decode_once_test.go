package monitor

import (
	"io"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/flightrec"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/source"
)

// TestGCStartDecodedOnce: on serve's path (a monitor with every option
// on, and the pause trigger after it, wired as serve wires them) each
// GCStart payload is decoded once: gcpause decodes it, the monitor's
// flavour and in-flight counts and the trigger's window read gcpause's
// decoded start (issue 35: three decodes per event before). The
// fixtures' GCStart counts are their workloads' (testdata/traces/README.md):
// 40 on gc-wks, 12 on gc-server (GC.CollectionCount(0) of each run).
func TestGCStartDecodedOnce(t *testing.T) {
	for _, tc := range []struct {
		file   string
		starts int
	}{{"gc-wks.nettrace", 40}, {"gc-server.nettrace", 12}} {
		t.Run(tc.file, func(t *testing.T) {
			st, err := source.Open(source.Spec{File: "../../testdata/traces/" + tc.file})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			trig := flightrec.NewPauseTrigger(st.Header(), flightrec.TriggerOptions{Over: time.Hour, Before: time.Second, After: time.Second,
				Create: func(int, *gcpause.GC) (io.WriteCloser, string, error) {
					t.Error("no pause is over an hour: nothing saved")
					return nil, "", io.ErrClosedPipe
				}})
			var began, ended int
			m := New(st.Header(), Options{CPU: true, Exceptions: true, ThreadPool: true,
				OnGCStart: func(g *gcpause.GC) { began++; trig.GCStart(g) },
				OnGC:      func(g *gcpause.GC) { ended++; trig.GC(g) }})
			before := clrevents.GCStartDecodes()
			events := 0
			for {
				ev, err := st.Next()
				if err != nil {
					break
				}
				if ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCStart {
					events++
				}
				m.Event(ev)
				trig.Event(ev)
			}
			trig.Finish()
			decodes := int(clrevents.GCStartDecodes() - before)
			if tc.starts >= 0 && events != tc.starts {
				t.Fatalf("%d GCStart events, want the workload's %d", events, tc.starts)
			}
			if events == 0 || decodes != events {
				t.Errorf("%d GCStart payloads decoded for %d GCStart events: want one decode each", decodes, events)
			}
			if began != events || ended != events {
				t.Errorf("OnGCStart %d, OnGC %d times for %d GCs", began, ended, events)
			}
		})
	}
}
