//go:build compat

package nettrace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracetest"
)

// TestPerfViewBaselines compares per-name event counts with TraceEvent's
// committed baselines (golden/perfview). TraceEvent's conventions, applied
// here to our raw counts (CATALOG.md §7.1a):
//   - rundown Method/DCStopVerbose (144) and Method/ILToNativeMapDCStop
//     (150) and runtime Method/ILToNativeMap (190) are consumed by TraceLog
//     and absent from the baselines;
//   - Increase/DecreaseMemoryPressure (200/201) are both counted under the
//     bare name "Microsoft-Windows-DotNETRuntime/GC";
//   - all versions of an event are summed under one name.
func TestPerfViewBaselines(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(tracetest.CompatDir(t), "golden/perfview/*.baseline.txt"))
	if err != nil || len(files) != 5 {
		t.Fatalf("want 5 baseline files, got %d (%v)", len(files), err)
	}
	for _, bf := range files {
		trace := strings.TrimSuffix(filepath.Base(bf), ".baseline.txt")
		t.Run(trace, func(t *testing.T) {
			want := readBaseline(t, bf)
			_, sum, end := readAll(t, tracetest.CompatPath(t, "perfview__"+trace))
			if end != nil {
				t.Fatalf("end: %v", end)
			}
			got := map[string]uint64{}
			for _, e := range sum.Counts() {
				switch {
				case e.Provider == ProviderRundown && (e.ID == 144 || e.ID == 150),
					e.Provider == ProviderRuntime && e.ID == 190:
					continue
				}
				name := e.Provider + "/" + e.Name
				if e.Provider == ProviderRuntime && (e.ID == 200 || e.ID == 201) {
					name = ProviderRuntime + "/GC"
				}
				got[name] += e.Count
			}
			if !reflect.DeepEqual(got, want) {
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: got %d, baseline %d", k, got[k], v)
					}
				}
				for k, v := range got {
					if _, ok := want[k]; !ok {
						t.Errorf("%s: got %d, not in the baseline", k, v)
					}
				}
			}
		})
	}
}

func readBaseline(t *testing.T, path string) map[string]uint64 {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	out := map[string]uint64{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ", ", 3)
		if len(parts) < 2 {
			continue
		}
		n, err := strconv.ParseUint(parts[1], 10, 64)
		if err != nil {
			t.Fatalf("baseline line %q: %v", sc.Text(), err)
		}
		out[parts[0]] = n
	}
	if len(out) == 0 {
		t.Fatalf("%s: empty baseline", path)
	}
	return out
}

// openTrace opens a trace of the compatibility suite.
func openTrace(t *testing.T, name string) *Reader {
	t.Helper()
	return tracetest.OpenCompat(t, name, NewReader)
}

// TestHeaderAsserts checks the header values TraceEvent's tests assert for
// the V4 file and the V3 headers listed in the catalog.
func TestHeaderAsserts(t *testing.T) {
	cases := []struct {
		file            string
		version         int
		utc             time.Time
		qpc, freq       int64
		ptr, pid, procs int
	}{
		// EventPipeParsing.CanParseHeaderOfV4EventPipeFile: .NET ticks
		// 636962398197540000 = 2019-06-15 23:56:59.754Z.
		{"perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace", 4,
			time.Date(2019, 6, 15, 23, 56, 59, 754e6, time.UTC), 100935252313, 3124099, 8, 10064, 4},
		{"perfview__eventpipe-dotnetcore2.1-linux-x64-objver3.netperf", 3,
			time.Date(2018, 2, 9, 23, 53, 0, 806e6, time.UTC), 137501448395619, 1_000_000_000, 8, 80749, 4},
		{"perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf", 3,
			time.Date(2018, 3, 9, 17, 48, 9, 998e6, time.UTC), 25832611201368, 1_000_000_000, 8, 12365, 4},
		{"perfview__VoiceMemo.23092.nettrace", 4,
			time.Date(2020, 6, 2, 6, 35, 18, 627e6, time.UTC), 649973149839371, 1_000_000_000, 4, 23092, 2},
		// verdie-g TraceObjectTest fragment.
		{"fragments/verdie-g__TraceObjectTest.nettrace", 4,
			time.Date(2023, 12, 26, 17, 47, 10, 622e6, time.UTC), 3679946412879, 10_000_000, 8, 2756, 12},
	}
	for _, c := range cases {
		r := openTrace(t, c.file)
		h := r.Header()
		if h.FormatVersion != c.version || !h.SyncTimeUTC.Equal(c.utc) || h.SyncTimeQPC != c.qpc ||
			h.QPCFrequency != c.freq || h.PointerSize != c.ptr || h.ProcessID != c.pid ||
			h.NumberOfProcessors != c.procs || h.ExpectedCPUSamplingRate != 1_000_000 {
			t.Errorf("%s: header %+v", c.file, *h)
		}
	}
}

// TestV5ArrayPayloads reproduces TraceEvent's CanReadV5EventPipeArrayTypes.
func TestV5ArrayPayloads(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore5.0-win-x64-arraytypes.nettrace")
	got := map[string]string{}
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		if ev.Meta.Provider != "TestEventSource0" {
			return
		}
		vals, err := DecodePayload(ev.Meta, ev.Payload, r.Header().PointerSize)
		if err != nil {
			t.Fatalf("%s: %v", ev.Meta.Name, err)
		}
		got[ev.Meta.Name] = fmt.Sprintf("level=%d keywords=%d opcode=%d %v", ev.Meta.Level, ev.Meta.EventKeywords(), ev.Meta.Opcode, vals)
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"TestEvent1": "level=2 keywords=0 opcode=0 [{arg0 [2032854139 1608221689 1470019200 199494339 1238846140 1366609043]} {arg1 [26494 17115 -7229 18850 27931]} {arg2 2033417279}]",
		"TestEvent2": "level=4 keywords=1231036291 opcode=0 [{arg0 -1001479330} {arg1 -1397908228} {arg2 [1470938110 172564262 1133558854 -1572049829]} {arg3 [2055126903 593325874 2130052527 162795177]}]",
		// The string's UTF-16 code units are {59299, 13231, 38541, 7407, 35812}.
		"TestEvent3/24": "level=2 keywords=0 opcode=24 [{arg0 " + string([]rune{59299, 13231, 38541, 7407, 35812}) + "}]",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got\n%v\nwant\n%v", got, want)
	}
}

// TestExecutionCheckpoints reproduces ExecutionCheckpointEventsAndTimeStamping:
// checkpoint QPC values relative to the session start, rounded to 0.01 ms.
func TestExecutionCheckpoints(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore6.0-win-x64-executioncheckpoints.nettrace")
	var got []string
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		if ev.Meta.Runtime != Rundown || ev.Meta.EventID != 300 {
			t.Fatalf("unexpected event %s", ev.Meta.FullName())
		}
		// u16 ClrInstanceID, UTF-16 name, i64 checkpoint timestamp.
		name, n, ok := DecodeUTF16Z(ev.Payload[2:])
		if !ok || len(ev.Payload) != 2+n+8 {
			t.Fatalf("checkpoint payload of %d bytes", len(ev.Payload))
		}
		ts := int64(le64(ev.Payload[2+n:]))
		ms := float64(r.Header().Nanos(ts)) / 1e6
		got = append(got, fmt.Sprintf("%s %.2f", name, math.Round(ms*100)/100))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"RuntimeInit -15.97", "RuntimeSuspend 11.91", "RuntimeResumed 12.20"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestVerdieFragment checks the MetadataAndEventBlock fragment (a stream
// without a Trace object) against verdie-g's asserted values.
func TestVerdieFragment(t *testing.T) {
	r := openTrace(t, "fragments/verdie-g__MetadataAndEventBlockTest_noTraceObject.nettrace")
	type evt struct {
		seq             uint32
		capture, thread uint64
		stack           uint32
		ts              int64
		payload         string
	}
	var got []evt
	var meta *Metadata
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		if meta != nil && meta != ev.Meta {
			t.Errorf("events do not share one metadata object")
		}
		meta = ev.Meta
		if !ev.ActivityID.IsZero() || !ev.RelatedActivityID.IsZero() {
			t.Errorf("activity ids not empty")
		}
		vals, err := DecodePayload(ev.Meta, ev.Payload, 8)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evt{ev.SequenceNumber, ev.CaptureThreadID, ev.ThreadID, ev.StackID, ev.Timestamp, fmt.Sprint(vals)})
	}); err != nil {
		t.Fatal(err)
	}
	want := []evt{
		{1, 2562, 2562, 1, 1632878627408683, "[{OriginatingTaskSchedulerID 1} {OriginatingTaskID 0} {TaskID 4} {Behavior 2} {ContinueWithTaskID 5}]"},
		{2, 2562, 2562, 2, 1632878627554414, "[{OriginatingTaskSchedulerID 1} {OriginatingTaskID 0} {TaskID 5} {Behavior 2} {ContinueWithTaskID 3}]"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events\n got %+v\nwant %+v", got, want)
	}
	if meta == nil || meta.ID != 1 || meta.Provider != "System.Threading.Tasks.TplEventSource" || meta.EventID != 10 ||
		meta.EventName != "TaskWaitBegin" || meta.Keywords != 263882790666243 || meta.Version != 3 ||
		meta.Level != 4 || meta.Opcode != 9 || len(meta.Fields) != 5 {
		t.Fatalf("metadata %+v", meta)
	}
	for _, f := range meta.Fields {
		if f.Type.Code != TypeInt32 {
			t.Errorf("field %s type %d, want Int32", f.Name, f.Type.Code)
		}
	}
	if !r.Stats().NoTraceObject {
		t.Error("NoTraceObject not reported")
	}
}

// TestActivityIDsV3 reproduces GuidsInMetadataAreSupported on the V3 file:
// one TplEventSource SetActivityId whose NewId becomes the activity id of
// every later event (single thread); earlier events have none.
func TestActivityIDsV3(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore2.1-linux-x64-objver3.netperf")
	const newID = "10000000-0000-0000-0000-000000000001"
	seen := 0
	var before, after, bad int
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		if ev.Meta.Provider == "System.Threading.Tasks.TplEventSource" && ev.Meta.EventID == 25 {
			seen++
			vals, err := DecodePayload(ev.Meta, ev.Payload, 8)
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) != 1 || vals[0].Name != "NewId" || fmt.Sprint(vals[0].V) != newID {
				t.Fatalf("SetActivityId payload %v", vals)
			}
			return
		}
		switch {
		case seen == 0 && ev.ActivityID.IsZero():
			before++
		case seen == 1 && ev.ActivityID.String() == newID:
			after++
		default:
			bad++
		}
	}); err != nil {
		t.Fatal(err)
	}
	// SetActivityId is the file's first event, so "before" is empty.
	if seen != 1 || bad != 0 || before != 0 || after != 26145 {
		t.Errorf("SetActivityId seen %d; events before %d, after %d, inconsistent %d", seen, before, after, bad)
	}
}

// TestTraceLoggingPayloads decodes every self-describing V3 event,
// including nested structs and empty events.
func TestTraceLoggingPayloads(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf")
	got := map[string]string{}
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		vals, err := DecodePayload(ev.Meta, ev.Payload, 8)
		if err != nil {
			t.Fatalf("%s: %v", ev.Meta.Name, err)
		}
		got[ev.Meta.Name] = fmt.Sprint(vals)
	}); err != nil {
		t.Fatal(err)
	}
	if got["TestEventMethod"] != "[{i 1} {s Hello World!}]" {
		t.Errorf("TestEventMethod = %s", got["TestEventMethod"])
	}
	if got["TestEmptyEvent"] != "[]" || got["SendEmptyEvent"] != "[]" {
		t.Errorf("empty events = %s / %s", got["TestEmptyEvent"], got["SendEmptyEvent"])
	}
	if !strings.Contains(got["TestNestedStructs"], "{") {
		t.Errorf("TestNestedStructs = %s", got["TestNestedStructs"])
	}
	t.Logf("%v", got)
}

// TestUnsupportedVersion: NetPerf V2 is rejected naming what was found and
// the supported range.
func TestUnsupportedVersion(t *testing.T) {
	f, err := os.Open(tracetest.CompatPath(t, "unsupported/perfview__eventpipe-dotnetcore2.0-win-x86.netperf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = NewReader(f)
	var uv *UnsupportedVersionError
	if !errors.As(err, &uv) {
		t.Fatalf("err = %v, want UnsupportedVersionError", err)
	}
	msg := err.Error()
	for _, want := range []string{"NetPerf V2", "V3", "V4", "V6"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

// TestProcessorNumbers reproduces TraceEvent's V4EventPipeFileHasProcNumbers:
// every runtime and private-provider event of the objver4 trace (runtime
// MethodILToNativeMap excluded) has a processor number in 0..3, and each of
// the 4 processors has at least one event.
func TestProcessorNumbers(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore3.0-win-x64-objver4.nettrace")
	var perCPU [4]int
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		m := ev.Meta
		if (m.Runtime != Runtime && m.Runtime != Private) || (m.Runtime == Runtime && m.EventID == 190) {
			return
		}
		if ev.ProcessorNumber > 3 {
			t.Fatalf("%s at %d: processor %d", m.Name, ev.Timestamp, ev.ProcessorNumber)
		}
		perCPU[ev.ProcessorNumber]++
	}); err != nil {
		t.Fatal(err)
	}
	for cpu, n := range perCPU {
		if n == 0 {
			t.Errorf("processor %d has no event", cpu)
		}
	}
}

// TestLostEventsAtSequencePoint: the webapp trace's sampler thread wrote
// sequence number 9074 last, and a later sequence point says the thread had
// reached 11310: the runtime dropped 2,236 events (TraceEvent's sequence
// point check reports the same number).
func TestLostEventsAtSequencePoint(t *testing.T) {
	r := openTrace(t, "dotnetdiag__dotnet-5.0-SampleProfiler-webapp.golden.nettrace")
	var attributed uint64
	if err := tracetest.ReadAll(t, r, func(ev *Event) {
		attributed += uint64(ev.LostBefore)
	}); err != nil {
		t.Fatal(err)
	}
	if got := r.Stats().LostEvents; got != 2236 {
		t.Errorf("lost events %d, want 2236", got)
	}
	// The gap shows at a sequence point after the sampler thread's last
	// event, so no later event can carry it in LostBefore: only Stats has it.
	if attributed != 0 {
		t.Errorf("lost events attributed to later events: %d, want 0", attributed)
	}
}

// TestResetCompat is TestReset over the compatibility suite: the .NET Core
// 3.0 trace, its copies, and NetPerf V3.
func TestResetCompat(t *testing.T) {
	data, err := os.ReadFile(tracetest.CompatPath(t, trace30))
	if err != nil {
		t.Fatal(err)
	}
	_, _, copies := copyTrace(t, bytes.NewReader(data),
		WriterOptions{Format: FormatNetTraceV6}, WriterOptions{Uncompressed: true})
	v3, err := os.ReadFile(tracetest.CompatPath(t, "perfview__eventpipe-dotnetcore2.1-linux-x64-objver3.netperf"))
	if err != nil {
		t.Fatal(err)
	}
	checkReset(t, []resetStream{
		{"3.0", data, 0, 105540},
		{"v6 copy", copies[0], 7000, 105540},
		{"netperf v3", v3, 0, 0},
		{"uncompressed copy", copies[1], 0, 105540},
		{"3.0 truncated", data[:len(data)/2], 0, 0},
		{"3.0 again", data, 50000, 105540},
		{"3.0 once more", data, 0, 105540},
	})
}

// TestRoundTripRealTraces is TestRoundTripFixtures over every trace of the
// compatibility suite.
func TestRoundTripRealTraces(t *testing.T) { roundTrip(t, realTraces(t)) }

func realTraces(t *testing.T) []string {
	dir := tracetest.CompatDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(dir, "*.netperf"))
	files = append(files, more...)
	if len(files) < 15 {
		t.Fatalf("expected the real traces in %s, found %d files", dir, len(files))
	}
	return files
}

// TestDumpNetPerf: the canonical dump of a NetPerf V3 trace names its
// container and shows self-describing payloads field by field.
func TestDumpNetPerf(t *testing.T) {
	r := openTrace(t, "perfview__eventpipe-dotnetcore2.1-linux-x64-tracelogging.netperf")
	var b strings.Builder
	if err := Dump(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "# netperf V3 pointer=8 pid=12365 processors=4 sync=2018-03-09T17:48:09.998") ||
		!strings.Contains(out, `/TestEventMethod v0 stack=9 i=1 s="Hello World!"`+"\n") || !strings.HasSuffix(out, " lost; complete\n") {
		t.Errorf("dump:\n%s", out)
	}
}
