package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/clrspy/clrspy/threadpool"
)

func threadPoolResult() *threadpool.Result {
	return &threadpool.Result{
		Summary: threadpool.Summary{SpanNs: 4e9, ThreadsMax: 21, HasThreads: true, QueueMax: 77, HasQueue: true,
			Injections: 2, Episodes: 1, BlockedNs: 9_600_000_000, Waits: 32, Source: "wait-handle"},
		InjectionsByReason: map[string]int{"cooperative_blocking": 2},
		Episodes: []threadpool.Episode{{StartNs: 1_017_000_000, EndNs: 3_078_000_000, Ended: true, Trigger: "cooperative_blocking injection",
			ThreadsBefore: 4, ThreadsAfter: 21, ThreadsMax: 21, Injections: 20, QueueMax: 77}},
		Stacks: []threadpool.Stack{{}, {Frames: []string{"System.Threading.Tasks.Task.Wait()", "Workload.Starve.Block(int32)"},
			Modules: []string{"System.Private.CoreLib.dll", "Workload.dll"}}},
		Sites: []threadpool.Site{{Site: "Workload.Starve.Block", Calls: "System.Threading.Tasks.Task.Wait", Stack: 1,
			BlockedNs: 9_600_000_000, Waits: 32, SyncOverAsync: true, Kind: "wait-handle"}},
		Blocked:     []threadpool.StackBlocked{{Stack: 1, Waits: 32, BlockedNs: 9_600_000_000, Kind: "wait-handle"}},
		Adjustments: []threadpool.Adjustment{{AtNs: 1_017_000_000, From: 2, To: 3, Reason: "cooperative_blocking"}, {AtNs: 2e9, From: 3, To: 4, Reason: "cooperative_blocking"}},
		Timeline:    []threadpool.Point{{Second: 0, Threads: 4, Queue: -1, Throughput: 0, Completed: -1}},
	}
}

// TestThreadPoolDocument: the JSON contract of clrspy threadpool --json
// (issue 24): threads_max, queue_max, starvation with UTC times, blocking
// sites with their stack, and unknown values as null.
func TestThreadPoolDocument(t *testing.T) {
	start := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	d := NewThreadPoolDocument(Input{Source: "x", Complete: true}, threadPoolResult(), start)
	var buf bytes.Buffer
	if err := WriteThreadPoolJSON(&buf, d); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	ep := got["starvation"].([]any)[0].(map[string]any)
	site := got["blocking_sites"].([]any)[0].(map[string]any)
	tl := got["timeline"].([]any)[0].(map[string]any)
	if got["threads_max"] != 21.0 || got["queue_max"] != 77.0 || ep["start_utc"] != "2026-11-27T01:00:01.017Z" ||
		ep["end_utc"] != "2026-11-27T01:00:03.078Z" || ep["threads_before"] != 4.0 || ep["threads_after"] != 21.0 ||
		ep["injections"] != 20.0 || ep["queue_max"] != 77.0 || site["site"] != "Workload.Starve.Block" ||
		site["blocked_ms"] != 9600.0 || site["waits"] != 32.0 || site["sync_over_async"] != true ||
		len(site["stack"].([]any)) != 2 || tl["queue"] != nil || tl["threads"] != 4.0 || got["complete"] != true {
		t.Errorf("document:\n%s", buf.Bytes())
	}
	var text bytes.Buffer
	if err := WriteThreadPoolText(&text, Input{Source: "x", Complete: true}, threadPoolResult(), start); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"at most 21", "queue at most 77", "01:00:01.017Z", "4 → 21", "Workload.Starve.Block  [sync-over-async]"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("no %q in\n%s", want, text.String())
		}
	}
}

// TestThreadPoolProfile: the pprof profile holds the blocked time by
// stack, with the comments given.
func TestThreadPoolProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteThreadPoolPprof(&buf, Input{Partial: []string{"x"}}, threadPoolResult(), time.Unix(0, 0), 4*time.Second); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || p.Sample[0].Value[0] != 32 || p.Sample[0].Value[1] != 9_600_000_000 ||
		p.Sample[0].Location[1].Line[0].Function.Name != "Workload.Starve.Block(int32)" || p.Comments[0] != "PARTIAL: x" ||
		p.SampleType[1].Type != "blocked" {
		t.Errorf("profile %v", p)
	}
}
