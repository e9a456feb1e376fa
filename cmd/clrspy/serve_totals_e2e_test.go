package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/internal/workload"
)

// TestServeTotalsFromProcessStart: serve attached to a process that ran
// (and collected) for over 10 s exports dotnet_gc_collections_total as
// the OpenTelemetry conventions define it, since the process started:
// after the process exits, the last values equal GC.CollectionCount the
// workload printed, the GCs before the attach included (the runtime's
// meter said how many at the attach). /targets then says the process has
// no session open, as clrspy_sessions does.
func TestServeTotalsFromProcessStart(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=90", "allocKB=16", "gcEveryMs=100", "gcGens=1", "stdin=1")
	// serve asks for the runtime's meter on processes older than 10 s.
	start, err := procfs.StartTime(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(11 * time.Second)))
	s := startServe(t, "--pid", strconv.Itoa(p.Pid), "--grace", "60s", "--counter-interval", "1s", "--level", "warn")
	s.waitState(t, p.Pid, "running", 30*time.Second)
	// The meter's first publication (1 s after the session opened; later
	// under load): the totals jump to the process's.
	deadline := time.Now().Add(20 * time.Second)
	for scrapeGens(t, s)[2] < 10 {
		if time.Now().After(deadline) {
			t.Fatalf("gen2 GCs %v after 20 s: the runtime's count before the attach never came", scrapeGens(t, s))
		}
		time.Sleep(200 * time.Millisecond)
	}
	p.Release()
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.waitState(t, p.Pid, "exited", 30*time.Second)
	got, want := scrapeGens(t, s), exclusive(res.Gen0, res.Gen1, res.Gen2)
	t.Logf("runtime counted %v (exclusive), serve exports %v", want, got)
	// Exact but when every publication the monitor seeds from raced with
	// a GC (monitor.seedPublications: a GC between the meter's read of
	// the counts and its event leaves that publication one low): at most
	// one per generation.
	missed, total := 0, 0
	for g := range got {
		if d := got[g] - want[g]; d < -1 || d > 1 {
			t.Errorf("gen%d: %d GCs exported, the runtime counted %d", g, got[g], want[g])
		} else if d < 0 {
			missed++
		}
		total += want[g]
	}
	// The pause time by the runtime's definition, from the process start:
	// within 2 % of GC.GetTotalPauseDuration, as TestServePrometheus holds
	// it for the GCs after an attach (the runtime's own total before, the
	// events' after). A GC the seed raced with (allowed above) is missing
	// from the pause total as well: each such GC allows twice the mean
	// pause more (seen under load: one gen0 GC short, 0.93 ms of 34.91).
	runtimeMs := scrapeValue(t, s, "clrspy_gc_pause_runtime_seconds_total") * 1e3
	t.Logf("pause: runtime %.2f ms, serve %.2f ms", res.PauseMs, runtimeMs)
	tol := 0.02 * res.PauseMs
	if total > 0 {
		tol += float64(missed) * 2 * res.PauseMs / float64(total)
	}
	if math.Abs(runtimeMs-res.PauseMs) > tol {
		t.Errorf("pause (runtime's definition) %.2f ms from the process start, the runtime counted %.2f ms", runtimeMs, res.PauseMs)
	}
	if want[2] < 30 {
		t.Errorf("only %d gen2 GCs: the workload did not collect before the attach", want[2])
	}
	if tg := s.targets(t)[strconv.Itoa(p.Pid)]; tg.Sessions != 0 || tg.Pid != p.Pid || tg.HostPid != p.Pid {
		t.Errorf("exited target %+v: want no session open and pid = host_pid = %d", tg, p.Pid)
	}
}

// TestServeTotalsYoungProcess: serve attached 2 s after a process began,
// when it had collected about 40 times, exports dotnet_gc_collections_total
// since the process start too. The session opens without the runtime's
// meter (a process that young may hang at exit after a meter session,
// counters.Options.Meter): until the process is 30 s old and a second,
// short session has read the runtime's counts, the GC events' numbering
// (GCStart's Count) says GCs came before the attach, and the total is left
// out, never exported short. Then the last values equal GC.CollectionCount
// the workload printed as it exited, per generation.
func TestServeTotalsYoungProcess(t *testing.T) {
	e2eBinary(t) // built before the process starts: it is attached at 2 s
	p := workload.Start(t, nil, "idle", "seconds=90", "allocKB=16", "gcEveryMs=20", "gcGens=1", "stdin=1")
	start, err := procfs.StartTime(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(start.Add(2 * time.Second)))
	s := startServe(t, "--pid", strconv.Itoa(p.Pid), "--grace", "60s", "--counter-interval", "1s", "--level", "warn")
	s.waitState(t, p.Pid, "running", 30*time.Second)
	// Once the session saw a GC (one every 20 ms), its numbering says it
	// is short: no total.
	deadline := time.Now().Add(5 * time.Second)
	for !hasFamily(t, s, "clrspy_gc_pause_seconds_count") {
		if time.Now().After(deadline) {
			t.Fatal("no GC seen in 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if age := time.Since(start); age < 9*time.Second {
		if hasFamily(t, s, "dotnet_gc_collections_total") || hasFamily(t, s, "dotnet_gc_pause_time_seconds_total") {
			t.Errorf("GC totals exported %v after the process start, before the runtime said what came before the attach", age)
		}
	}
	deadline = time.Now().Add(40 * time.Second)
	for !hasFamily(t, s, "dotnet_gc_collections_total") {
		if time.Now().After(deadline) {
			t.Fatalf("no dotnet_gc_collections_total %v after the process start", time.Since(start))
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The seed takes a few publications (monitor.seedPublications).
	time.Sleep(5 * time.Second)
	p.Release()
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	s.waitState(t, p.Pid, "exited", 30*time.Second)
	got, want := scrapeGens(t, s), exclusive(res.Gen0, res.Gen1, res.Gen2)
	t.Logf("runtime counted %v (exclusive), serve exports %v", want, got)
	if got != want {
		t.Errorf("serve exports %v GCs per generation since the process start, the runtime counted %v", got, want)
	}
	// A GC every 50 ms for 15 s and more (fewer on a loaded machine).
	if want[0]+want[1]+want[2] < 100 {
		t.Errorf("only %v GCs: the workload did not collect", want)
	}
	runtimeMs := scrapeValue(t, s, "clrspy_gc_pause_runtime_seconds_total") * 1e3
	t.Logf("pause: runtime %.2f ms, serve %.2f ms", res.PauseMs, runtimeMs)
	// Most GCs came after the attach, their pauses rebuilt from the
	// events (seen 1.5 to 2 % low here, at one GC every 50 ms): 3 %.
	if math.Abs(runtimeMs-res.PauseMs) > 0.03*res.PauseMs {
		t.Errorf("pause (runtime's definition) %.2f ms from the process start, the runtime counted %.2f ms", runtimeMs, res.PauseMs)
	}
}

// hasFamily reports whether serve's /metrics has a series of the family.
func hasFamily(t *testing.T, s *serveProc, name string) bool {
	t.Helper()
	return bytes.Contains(httpGet(t, "http://"+s.addr+"/metrics"), []byte("\n"+name+"{"))
}

// scrapeGens reads dotnet_gc_collections_total per generation from
// serve's /metrics (one process monitored).
func scrapeGens(t *testing.T, s *serveProc) [3]int {
	t.Helper()
	var g [3]int
	sc := bufio.NewScanner(bytes.NewReader(httpGet(t, "http://"+s.addr+"/metrics")))
	for sc.Scan() {
		l := sc.Text()
		if !strings.HasPrefix(l, "dotnet_gc_collections_total{") {
			continue
		}
		for i := range g {
			if strings.Contains(l, fmt.Sprintf(`dotnet_gc_heap_generation="gen%d"`, i)) {
				v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
				if err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				g[i] = int(v)
			}
		}
	}
	return g
}

// scrapeValue reads one series without labels beyond pid and process
// from serve's /metrics (one process monitored).
func scrapeValue(t *testing.T, s *serveProc, name string) float64 {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(httpGet(t, "http://"+s.addr+"/metrics")))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, name+"{") {
			v, err := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			return v
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}

// TestServeMissingPid: a --pid that names no process is said, not
// monitored silently.
func TestServeMissingPid(t *testing.T) {
	pid := 999999
	for ; pid > 900000; pid-- {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); os.IsNotExist(err) {
			break
		}
	}
	s := startServe(t, "--pid", strconv.Itoa(pid))
	want := fmt.Sprintf("clrspy: warning: --pid %d: no process has this pid now", pid)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.stderr.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no warning %q:\n%s", want, s.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
