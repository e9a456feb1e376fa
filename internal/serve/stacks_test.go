package serve

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/workload"
)

// TestStacksEndpoint: a deadlock (two threads on two Monitors in opposite
// order) formed while serve's session watches is a WARN line with the
// cycle, clrspy_deadlocks 1 and clrspy_blocked_threads{kind="lock"} 2 in
// /metrics; /debug/stacks on
// the process, its own session begun after the deadlock, is the stacks
// document: every thread /proc lists, the workload's two threads (its own
// record of their OS ids) in Monitor waits, on .NET 10 one deadlock of
// exactly those two read from the target's memory, logged as a WARN line; format=text is
// the text report; a second snapshot within the rate limit is refused
// with 429 and Retry-After; bad requests in one line.
func TestStacksEndpoint(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, log := run(t, Config{Config: fleet.Config{Names: []string{name}, CounterInterval: time.Second}})
	h, err := d.Handler(HandlerOptions{ProfileEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "deadlock", "wait=1")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Release()
	re := regexp.MustCompile(`deadlock thread=\d managed=\d+ tid=(\d+)`)
	var tids []uint64
	waitFor(t, 60*time.Second, "the workload deadlocked", func() bool {
		return strings.Contains(p.Stderr(), "deadlocked") && len(re.FindAllStringSubmatch(p.Stderr(), -1)) == 2
	})
	for _, m := range re.FindAllStringSubmatch(p.Stderr(), -1) {
		tid, _ := strconv.ParseUint(m[1], 10, 64)
		tids = append(tids, tid)
	}
	slices.Sort(tids)
	// The waits count once open a second; the gauges move with the
	// monitor's events (counters every second).
	dl := regexp.MustCompile(`(?m)^clrspy_deadlocks\{pid="` + pid + `",process="[^"]*"\} 1$`)
	bl := regexp.MustCompile(`(?m)^clrspy_blocked_threads\{kind="lock",pid="` + pid + `",process="[^"]*"\} 2$`)
	waitFor(t, 20*time.Second, "clrspy_deadlocks 1 and 2 blocked threads", func() bool {
		m := get(t, h, "/metrics").Body.String()
		return dl.MatchString(m) && bl.MatchString(m)
	})
	// The monitor's graph saw the cycle close: a WARN line names it.
	cycle := "thread " + strconv.FormatUint(tids[0], 10) + " waits for a lock"
	if l := log.String(); !strings.Contains(l, "deadlock: threads wait in a cycle") || !strings.Contains(l, cycle) {
		t.Errorf("no WARN line with the cycle (%q):\n%s", cycle, l)
	}

	rec := get(t, h, "/debug/stacks?pid="+pid)
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("stacks: %d %s", rec.Code, rec.Body)
	}
	var doc struct {
		Live    bool `json:"live"`
		Pid     int  `json:"pid"`
		Threads []struct {
			OSTid uint64 `json:"os_tid"`
			Wait  *struct {
				Kind string `json:"kind"`
			} `json:"wait"`
			Frames []string `json:"frames"`
		} `json:"threads"`
		Deadlocks []struct {
			Threads   []uint64 `json:"threads"`
			Suspected bool     `json:"suspected"`
			Source    string   `json:"source"`
		} `json:"deadlocks"`
		ByWaitKind map[string]int `json:"by_wait_kind"`
		Sampled    int            `json:"sampled"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p.Pid))
	t.Logf("workload's threads %v; %d threads listed, %d in /proc, by wait %v, deadlocks %+v",
		tids, len(doc.Threads), len(tasks), doc.ByWaitKind, doc.Deadlocks)
	if !doc.Live || doc.Pid != p.Pid || doc.Sampled < 3 {
		t.Errorf("live %v pid %d sampled %d, want a live snapshot of %d with the 3 managed threads", doc.Live, doc.Pid, doc.Sampled, p.Pid)
	}
	// The tiering thread may come or go between the two listings.
	if n := len(doc.Threads); n < len(tasks)-1 || n > len(tasks)+1 {
		t.Errorf("%d threads listed, /proc lists %d", n, len(tasks))
	}
	methods := map[uint64]string{}
	for _, th := range doc.Threads {
		for _, m := range []string{"Workload.Deadlock.TakeAB(", "Workload.Deadlock.TakeBA("} {
			if slices.ContainsFunc(th.Frames, func(f string) bool { return strings.HasPrefix(f, m) }) {
				methods[th.OSTid] = m
			}
		}
	}
	if len(methods) != 2 || methods[tids[0]] == "" || methods[tids[1]] == "" {
		t.Errorf("threads in TakeAB/TakeBA: %v, want the workload's %v", methods, tids)
	}
	// .NET 10's frames, or .NET 9's record of each wait in its memory,
	// say the two wait in Monitor.Enter.
	if monitorWaits := workload.TFM() != "net8.0"; monitorWaits {
		// At least the 2 deadlocked: a runtime thread may be in a Monitor
		// wait too (CI saw 3 once, 2026-12-03); each deadlocked one must.
		if doc.ByWaitKind["monitor"] < 2 {
			t.Errorf("%d threads in monitor waits, want the 2 deadlocked", doc.ByWaitKind["monitor"])
		}
		// The owners come from the target's memory (its sync blocks): a
		// deadlock, not a suspicion.
		if len(doc.Deadlocks) != 1 || doc.Deadlocks[0].Suspected || doc.Deadlocks[0].Source != "target_memory" || !slices.Equal(doc.Deadlocks[0].Threads, tids) {
			t.Errorf("deadlocks %+v, want one of %v read from the target's memory", doc.Deadlocks, tids)
		}
		if !strings.Contains(log.String(), "deadlock (/debug/stacks)") {
			t.Errorf("no WARN line for the deadlock:\n%s", log.String())
		}
	} else if len(doc.Deadlocks) != 0 {
		t.Errorf("deadlocks %+v on %s: no Monitor frame, no memory read", doc.Deadlocks, workload.TFM())
	}

	// The rate limit: one snapshot an hour here.
	rec = get(t, h, "/debug/stacks?pid="+pid+"&format=text")
	if rec.Code != 429 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("a second snapshot at once: %d (Retry-After %q), want 429", rec.Code, rec.Header().Get("Retry-After"))
	}
	h2, err := d.Handler(HandlerOptions{ProfileEvery: -1})
	if err != nil {
		t.Fatal(err)
	}
	text := get(t, h2, "/debug/stacks?pid="+pid+"&format=text").Body.String()
	if !strings.HasPrefix(text, "pid "+pid+" (") || !strings.Contains(text, "Workload.Deadlock.TakeAB(") {
		t.Errorf("text:\n%s", text)
	}
	for url, code := range map[string]int{
		"/debug/stacks":                          400,
		"/debug/stacks?pid=" + pid + "&format=x": 400,
		"/debug/stacks?pid=1":                    404,
	} {
		if rec := get(t, h2, url); rec.Code != code || strings.Count(strings.TrimSpace(rec.Body.String()), "\n") > 0 {
			t.Errorf("%s: %d %q, want %d in one line", url, rec.Code, rec.Body.String(), code)
		}
	}
}

// TestStacksEndpointHang: the hang workload (3 threads in Monitor.Enter
// behind the main thread, which sleeps holding the lock; 2 in WaitOne; 2
// more asleep) formed under serve's session: clrspy_blocked_threads
// {kind="lock"} 3 and clrspy_deadlocks 0 (a convoy is no cycle);
// /debug/stacks names each of the workload's threads with its wait
// (monitor on .NET 10, where the Monitor's frames are managed) and finds
// no deadlock.
func TestStacksEndpointHang(t *testing.T) {
	dir := t.TempDir()
	path, name := alias(t, dir)
	d, _ := run(t, Config{Config: fleet.Config{Names: []string{name}, CounterInterval: time.Second}})
	h, err := d.Handler(HandlerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p := startAs(t, path, nil, "hang", "wait=1", "monitor=3", "handle=2", "sleep=2")
	pid := strconv.Itoa(p.Pid)
	waitFor(t, 20*time.Second, "session open", func() bool { ti, _ := info(d, pid); return ti.State == "running" })
	p.Release()
	waitFor(t, 60*time.Second, "the workload hung", func() bool { return strings.Contains(p.Stderr(), "hung monitor=3 wait_handle=2 sleep=3") })
	bl := regexp.MustCompile(`(?m)^clrspy_blocked_threads\{kind="lock",pid="` + pid + `",process="[^"]*"\} 3$`)
	dl := regexp.MustCompile(`(?m)^clrspy_deadlocks\{pid="` + pid + `",process="[^"]*"\} 0$`)
	waitFor(t, 20*time.Second, "3 threads blocked on a lock, no deadlock", func() bool {
		m := get(t, h, "/metrics").Body.String()
		return bl.MatchString(m) && dl.MatchString(m)
	})
	rec := get(t, h, "/debug/stacks?pid="+pid)
	if rec.Code != 200 {
		t.Fatalf("stacks: %d %s", rec.Code, rec.Body)
	}
	var doc struct {
		Deadlocks []json.RawMessage `json:"deadlocks"`
		Threads   []struct {
			Name string `json:"name"`
			Wait *struct {
				Kind string `json:"kind"`
			} `json:"wait"`
		} `json:"threads"`
		ByWaitKind map[string]int `json:"by_wait_kind"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	t.Logf("by wait %v", doc.ByWaitKind)
	// The workload's threads by name (the runtime's counter thread, which
	// serve's session starts, waits too).
	monitorKind := "futex" // .NET 8 and 9: Monitor.Enter is no managed frame
	if workload.TFM() != "net8.0" && workload.TFM() != "net9.0" {
		monitorKind = "monitor"
	}
	got := map[string]int{}
	for _, th := range doc.Threads {
		kind := "running"
		if th.Wait != nil {
			kind = th.Wait.Kind
		}
		if strings.HasPrefix(th.Name, "hang-") {
			got[strings.TrimRight(th.Name, "0123456789")+" "+kind]++
		}
	}
	if want := map[string]int{"hang-monitor- " + monitorKind: 3, "hang-handle- wait_handle": 2, "hang-sleep- sleep": 2}; !maps.Equal(got, want) {
		t.Errorf("the workload's threads by wait: %v, want %v", got, want)
	}
	if len(doc.Deadlocks) != 0 {
		t.Errorf("deadlocks %s: threads queued on one lock are no cycle", doc.Deadlocks)
	}
}
