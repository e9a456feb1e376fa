package threadpool

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/traceevent"
	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// teNames are the events whose fields are compared with TraceEvent's
// parsers (TraceEvent's names, which clrevents' spec table uses).
var teNames = []string{
	"ThreadPoolWorkerThread/Start", "ThreadPoolWorkerThread/Stop", "ThreadPoolWorkerThread/Wait",
	"ThreadPoolWorkerThreadAdjustment/Sample", "ThreadPoolWorkerThreadAdjustment/Adjustment",
	"ThreadPoolWorkerThreadAdjustment/Stats", "ThreadPoolMinMaxThreads",
	"WaitHandleWait/Start", "WaitHandleWait/Stop",
}

// decodeFields decodes a thread-pool or wait event with clrevents and
// returns its fields by name (the struct's field names are the manifest's).
func decodeFields(ev *nettrace.Event, ptr int) (map[string]float64, error) {
	m := ev.Meta
	var v any
	var err error
	switch m.EventID {
	case clrevents.IDThreadPoolWorkerThreadStart, clrevents.IDThreadPoolWorkerThreadStop, clrevents.IDThreadPoolWorkerThreadWait:
		v, err = clrevents.DecodeThreadPoolWorker(ev.Payload, m.Version, ptr)
	case clrevents.IDThreadPoolAdjustmentSample:
		v, err = clrevents.DecodeThreadPoolAdjustmentSample(ev.Payload, m.Version, ptr)
	case clrevents.IDThreadPoolAdjustmentAdjustment:
		v, err = clrevents.DecodeThreadPoolAdjustment(ev.Payload, m.Version, ptr)
	case clrevents.IDThreadPoolAdjustmentStats:
		v, err = clrevents.DecodeThreadPoolAdjustmentStats(ev.Payload, m.Version, ptr)
	case clrevents.IDThreadPoolMinMaxThreads:
		v, err = clrevents.DecodeThreadPoolMinMaxThreads(ev.Payload, m.Version, ptr)
	case clrevents.IDWaitHandleWaitStart:
		v, err = clrevents.DecodeWaitHandleWaitStart(ev.Payload, m.Version, ptr)
	case clrevents.IDWaitHandleWaitStop:
		v, err = clrevents.DecodeWaitHandleWaitStop(ev.Payload, m.Version, ptr)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			out[rv.Type().Field(i).Name] = float64(f.Uint())
		case reflect.Float64:
			out[rv.Type().Field(i).Name] = f.Float()
		}
	}
	return out, nil
}

func canon(name string, thread int64, fields map[string]float64) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "%s tid=%d", name, thread)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%.10g", k, fields[k])
	}
	return b.String()
}

// compareWithTraceEvent checks that clrevents decodes every thread-pool
// and wait event of the trace at path as TraceEvent does: the same events
// (name and thread) with the same field values, as multisets (the two
// readers may order events of different threads differently). It returns
// the number of events per name.
func compareWithTraceEvent(t *testing.T, path string) map[string]int {
	t.Helper()
	te := traceevent.Fields(t, path, teNames...)
	if te.Error != "" {
		t.Fatalf("TraceEvent: %s", te.Error)
	}
	var want []string
	counts := map[string]int{}
	for _, e := range te.Events {
		f := map[string]float64{}
		for k, v := range e.Fields {
			x, ok := v.(float64)
			if !ok {
				t.Fatalf("%s: field %s is %T %v", e.Name, k, v, v)
			}
			f[k] = x
		}
		want = append(want, canon(e.Name, e.Thread, f))
		counts[e.Name]++
	}
	r := tracetest.OpenFile(t, path, nettrace.NewReader)
	ptr := r.Header().PointerSize
	var got []string
	if err := tracetest.ReadAll(t, r, func(ev *nettrace.Event) {
		if ev.Meta.Runtime != nettrace.Runtime || !slices.Contains(teNames, ev.Meta.Name) {
			return
		}
		f, err := decodeFields(ev, ptr)
		if err != nil {
			t.Errorf("%s: %v", ev.Meta.Name, err)
			return
		}
		got = append(got, canon(ev.Meta.Name, int64(ev.ThreadID), f))
	}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	slices.Sort(got)
	if len(got) != len(want) {
		t.Errorf("%d events decoded, TraceEvent has %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("first difference:\n clrspy     %s\n TraceEvent %s", got[i], want[i])
			break
		}
	}
	return counts
}

// gunzip writes testdata/traces/NAME.gz to a temporary file (TraceEvent
// reads files).
func gunzip(t *testing.T, name string) string {
	t.Helper()
	in, err := os.Open(tracetest.Path(t, name+".gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	z, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, z); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFieldsEqualTraceEvent: the starve fixture's thread-pool and wait
// events decode as TraceEvent decodes them. The counts are this
// recording's (clrspy stat).
func TestFieldsEqualTraceEvent(t *testing.T) {
	counts := compareWithTraceEvent(t, gunzip(t, "threadpool.nettrace"))
	want := map[string]int{
		"ThreadPoolWorkerThread/Start": 13, "ThreadPoolWorkerThread/Wait": 48,
		"ThreadPoolWorkerThreadAdjustment/Sample": 3, "ThreadPoolWorkerThreadAdjustment/Adjustment": 19,
		"ThreadPoolWorkerThreadAdjustment/Stats": 3, "ThreadPoolMinMaxThreads": 1,
		"WaitHandleWait/Start": 108, "WaitHandleWait/Stop": 105,
	}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("TraceEvent's counts %v, want %v", counts, want)
	}
}
