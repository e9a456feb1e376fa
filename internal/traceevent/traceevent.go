package traceevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"testing"

	"github.com/clrspy/clrspy/internal/workload"
)

// Project is the TraceEvent program's build (paths from the module root;
// make traceevent builds the same).
var Project = workload.Project{
	Dir:       "testdata/traceevent/TraceEventBench",
	Name:      "TraceEventBench",
	Out:       "testdata/traceevent/bin",
	Artifacts: "testdata/traceevent/obj",
	Lock:      "testdata/traceevent/build.lock",
}

var (
	buildOnce sync.Once
	buildExe  string
	buildErr  error
)

// Exe builds the program (once per process) and returns its path; it fails
// the test when dotnet is missing or the build fails.
func Exe(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		// go test -short: the library tests alone, no .NET build or run.
		tb.Skip("needs dotnet (the TraceEvent program): not run with -short")
	}
	buildOnce.Do(func() { buildExe, buildErr = workload.Build(Project) })
	if buildErr != nil {
		tb.Fatalf("building the TraceEvent program: %v", buildErr)
	}
	return buildExe
}

// GCRow is one TraceGC.
type GCRow struct {
	Number       uint32  `json:"number"`
	Generation   int     `json:"generation"`
	Type         string  `json:"type"`   // TraceEvent's GCType: NonConcurrentGC, BackgroundGC, ForegroundGC
	Reason       string  `json:"reason"` // TraceEvent's GCReason: AllocSmall, Induced, ...
	Complete     bool    `json:"complete"`
	PauseStartMS float64 `json:"pause_start_ms"`
	StartMS      float64 `json:"start_ms"`
	SuspendMS    float64 `json:"suspend_ms"`
	PauseMS      float64 `json:"pause_ms"` // PerfView's pause
	DurationMS   float64 `json:"duration_ms"`
}

// GCResult is what the gc mode printed.
type GCResult struct {
	Events    int64 `json:"events"` // events TraceEvent delivered
	Processes []struct {
		Pid int     `json:"pid"`
		GCs []GCRow `json:"gcs"`
	} `json:"processes"`
	// Error is the exception that ended TraceEvent's read early (it
	// delivered Events events before it).
	Error string `json:"error"`
}

// GCs are the rows of every process (a nettrace file holds one).
func (r *GCResult) GCs() []GCRow {
	var out []GCRow
	for _, p := range r.Processes {
		out = append(out, p.GCs...)
	}
	return out
}

// StatRow is one event's count.
type StatRow struct {
	Provider string `json:"provider"`
	Name     string `json:"name"`
	ID       int    `json:"id"`
	Version  int    `json:"version"`
	Count    int64  `json:"count"`
}

// StatResult is what the stat mode printed.
type StatResult struct {
	Events     int64     `json:"events"`
	EventsLost int64     `json:"events_lost"`
	Counts     []StatRow `json:"event_counts"`
	Error      string    `json:"error"`
}

// GC runs the gc mode on the trace at path.
func GC(tb testing.TB, path string) *GCResult {
	tb.Helper()
	var r GCResult
	run(tb, "gc", path, &r)
	return &r
}

// Stat runs the stat mode on the trace at path.
func Stat(tb testing.TB, path string) *StatResult {
	tb.Helper()
	var r StatResult
	run(tb, "stat", path, &r)
	return &r
}

// run runs one mode and decodes its document. Exit status 1 with a
// document is TraceEvent failing part way (the document's error says how);
// anything else fails the test.
func run(tb testing.TB, mode, path string, v any, extra ...string) {
	tb.Helper()
	cmd := exec.Command(Exe(tb), append([]string{mode, path}, extra...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		tb.Fatalf("TraceEventBench %s %s: %v\n%s", mode, path, err, stderr.Bytes())
	}
	if derr := json.Unmarshal(out, v); derr != nil {
		tb.Fatalf("TraceEventBench %s %s: %v (exit: %v)\n%s%s", mode, path, derr, err, out, stderr.Bytes())
	}
	if err != nil && !bytes.Contains(out, []byte(`"error"`)) {
		tb.Fatalf("TraceEventBench %s %s: %v without an error in its document\n%s", mode, path, err, stderr.Bytes())
	}
}

// String is a row as the tests print it.
func (g GCRow) String() string {
	return fmt.Sprintf("GC %d gen%d %s %s complete=%v pause %.6f ms", g.Number, g.Generation, g.Type, g.Reason, g.Complete, g.PauseMS)
}

// FieldsEvent is one event of the fields mode: its TraceEvent name and its
// payload fields as TraceEvent's parsers decode them.
type FieldsEvent struct {
	Name    string         `json:"name"`
	Version int            `json:"version"`
	Thread  int64          `json:"thread"`
	TimeMS  float64        `json:"time_ms"`
	Fields  map[string]any `json:"fields"`
}

// FieldsResult is what the fields mode printed.
type FieldsResult struct {
	Events []FieldsEvent `json:"events"`
	Error  string        `json:"error"`
}

// Fields runs the fields mode: the events named names (TraceEvent's names,
// "ThreadPoolWorkerThread/Start") of the trace at path, in stream order.
func Fields(tb testing.TB, path string, names ...string) *FieldsResult {
	tb.Helper()
	var r FieldsResult
	run(tb, "fields", path, &r, names...)
	return &r
}
