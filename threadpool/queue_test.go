package threadpool

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/clrspy/clrspy/counters"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

// An EventCounters "Mean" event as the runtime writes it (System.Runtime,
// EventCounterIntervalSec=1): the field list of a .NET 10 session's
// metadata record.
var meanMeta = func() *nettrace.Metadata {
	str := func(n string) nettrace.Field {
		return nettrace.Field{Name: n, Type: nettrace.FieldType{Code: nettrace.TypeString}}
	}
	typed := func(n string, c nettrace.TypeCode) nettrace.Field {
		return nettrace.Field{Name: n, Type: nettrace.FieldType{Code: c}}
	}
	fs := []nettrace.Field{str("Name"), str("DisplayName"), typed("Mean", nettrace.TypeDouble), typed("StandardDeviation", nettrace.TypeDouble),
		typed("Count", nettrace.TypeInt32), typed("Min", nettrace.TypeDouble), typed("Max", nettrace.TypeDouble),
		typed("IntervalSec", nettrace.TypeSingle), str("Series"), str("CounterType"), str("Metadata"), str("DisplayUnits")}
	inner := nettrace.Field{Name: "Payload", Type: nettrace.FieldType{Code: nettrace.TypeObject, Fields: fs}}
	return &nettrace.Metadata{Provider: counters.RuntimeSource, EventName: "EventCounters", HasFields: true,
		Fields: []nettrace.Field{{Type: nettrace.FieldType{Code: nettrace.TypeObject, Fields: []nettrace.Field{inner}}}}}
}()

func meanPayload(name string, v float64) []byte {
	var p []byte
	s := func(v string) {
		for _, c := range v {
			p = binary.LittleEndian.AppendUint16(p, uint16(c))
		}
		p = append(p, 0, 0)
	}
	f64 := func(v float64) { p = binary.LittleEndian.AppendUint64(p, math.Float64bits(v)) }
	s(name)
	s("Display")
	f64(v)
	f64(0)
	p = binary.LittleEndian.AppendUint32(p, 1)
	f64(v)
	f64(v)
	p = binary.LittleEndian.AppendUint32(p, math.Float32bits(1))
	s("Interval=1000")
	s("Mean")
	s("")
	s("")
	return p
}

// TestQueueGrowthEpisode: without injections for blocked threads (a pool
// whose threads are busy, not blocked, or a runtime that does not say), a
// queue that grows over two counter intervals while no worker parks starts
// an episode, and the queue reading 0 ends it.
func TestQueueGrowthEpisode(t *testing.T) {
	h := &nettrace.Header{PointerSize: 8, QPCFrequency: 1e9}
	a := New(h, Options{Counters: counters.New(h, counters.Options{}), FeedCounters: true})
	ev := &nettrace.Event{Meta: meanMeta}
	for i, q := range []float64{0, 5, 12, 30, 0} {
		ev.Timestamp = int64(i+1) * 1e9
		ev.Payload = meanPayload("threadpool-thread-count", 4)
		a.Event(ev)
		ev.Payload = meanPayload("threadpool-queue-length", q)
		a.Event(ev)
	}
	// An event 2 s later makes the last interval's snapshot and passes the
	// end's grace.
	ev.Timestamp = 7e9
	ev.Payload = meanPayload("threadpool-thread-count", 4)
	a.Event(ev)
	r := a.Result()
	if err := r.CheckValid(); err != nil {
		t.Error(err)
	}
	s := r.Summary
	if !s.HasQueue || s.QueueMax != 30 || s.ThreadsMax != 4 {
		t.Fatalf("summary %+v", s)
	}
	// Samples at 1..5 s (ns since the first event at 1 s: 0..4 s): the
	// queue grew 5 → 12 at 2 s, read 0 at 4 s.
	if len(r.Episodes) != 1 {
		t.Fatalf("episodes %+v", r.Episodes)
	}
	e := r.Episodes[0]
	if e.StartNs != 2e9 || e.EndNs != 4e9 || !e.Ended || e.QueueMax != 30 || e.Trigger != "the queue grew while no worker parked" ||
		e.EndedBy != "the queue emptied" || e.ThreadsBefore != 4 {
		t.Errorf("episode %+v", e)
	}
	if st := a.Stats(); st.DecodeErrors != 0 {
		t.Errorf("decode errors: %v", st.FirstError)
	}
}

// TestGeneratedSite: a runtime-generated method (an MVC action's compiled
// invoker, the action inlined into it) as the first application frame
// is named by what calls it, never as a bare lambda_method.
func TestGeneratedSite(t *testing.T) {
	m := func(name, mod string) stacks.Frame {
		return stacks.Frame{Kind: stacks.KindManaged, Name: name, Module: mod}
	}
	fs := []stacks.Frame{
		m("System.Threading.Tasks.Task.Wait(int32,value class System.Threading.CancellationToken)", "System.Private.CoreLib.dll"),
		m("dynamicClass.lambda_method2(pMT: [ClassLoader.Closure],object,object[])", ""),
		m("Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor+SyncObjectResultExecutor.Execute(class Microsoft.AspNetCore.Mvc.Infrastructure.IActionResultTypeMapper)", "Microsoft.AspNetCore.Mvc.Core.dll"),
		m("System.Threading.ThreadPoolWorkQueue.Dispatch()", "System.Private.CoreLib.dll"),
	}
	c := classify(fs)
	want := "dynamicClass.lambda_method2 [runtime-generated, called by Microsoft.AspNetCore.Mvc.Infrastructure.ActionMethodExecutor+SyncObjectResultExecutor.Execute]"
	if c.site != want || c.calls != "System.Threading.Tasks.Task.Wait" || !c.syncOverAsync {
		t.Errorf("site %q calls %q sync-over-async %v, want %q", c.site, c.calls, c.syncOverAsync, want)
	}
	// An application method keeps its own name.
	fs[1] = m("Shop.OrdersController.Get()", "Shop.dll")
	if c := classify(fs); c.site != "Shop.OrdersController.Get" {
		t.Errorf("site %q", c.site)
	}
}
