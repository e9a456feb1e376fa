package source

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

var gcProviders = []ipc.Provider{{Name: nettrace.ProviderRuntime, Keywords: ipc.KeywordGC, Level: ipc.LevelInformational}}

// gcCounter counts GC starts and rundown events.
type gcCounter struct {
	countingAnalyzer
	gcs, rundown int
}

func (c *gcCounter) Event(ev *nettrace.Event) {
	c.countingAnalyzer.Event(ev)
	switch {
	case ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == clrevents.IDGCStart:
		c.gcs++
	case ev.Meta.Runtime == nettrace.Rundown:
		c.rundown++
	}
}

// TestLaunchExit: a launched program runs to its end under the session;
// the stream ends with it (not truncated: the runtime closes the session
// at shutdown), and its exit status comes back.
func TestLaunchExit(t *testing.T) {
	var out bytes.Buffer
	st, err := Open(Spec{Argv: workload.Argv(t, "induced", "gen0=3", "gen1=2", "gen2=1", "exit=3"), Providers: gcProviders,
		ProgramStdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if st.Kind != Launch || !st.Live() || st.Pid <= 0 {
		t.Errorf("stream %+v", st)
	}
	c := &gcCounter{}
	end, err := st.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if code := st.ExitCode(); code != 3 {
		t.Errorf("exit code %d, want 3", code)
	}
	res, err := workload.ParseResult(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	// The session saw the program from its first GC: every GC the runtime
	// counted is in the stream.
	if c.gcs != res.Gen0 || end.Truncated != nil || !end.TargetExited || end.EventsLost != 0 {
		t.Errorf("%d GC starts (runtime: %d GCs), end %+v", c.gcs, res.Gen0, end)
	}
}

// TestLaunchInterrupt: the first SIGINT stops the session (the rundown is
// written), then reaches the program; the stream is complete, never
// truncated, at any moment of the program's life. .NET exits 130 on an
// unhandled SIGINT. A session stopped the instant the runtime was resumed
// gets no rundown (the runtime has not loaded anything to list yet: measured
// 0 rundown events there, 500+ from 300 ms on), so only later interrupts
// must bring one.
func TestLaunchInterrupt(t *testing.T) {
	for _, after := range []time.Duration{0, 300 * time.Millisecond, 1500 * time.Millisecond} {
		st, err := Open(Spec{Argv: workload.Argv(t, "idle", "seconds=60", "gcEveryMs=20"), Providers: gcProviders,
			ProgramStderr: &bytes.Buffer{}})
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(after, func() { st.Interrupt(syscall.SIGINT) })
		c := &gcCounter{}
		start := time.Now()
		end, err := st.Run(c)
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		t.Logf("interrupt after %v: ended after %v, %d events, %d GCs, %d rundown, exit %d", after, time.Since(start).Round(time.Millisecond),
			end.Events, c.gcs, c.rundown, st.ExitCode())
		if end.Truncated != nil || end.TargetExited || (after > 0 && c.rundown == 0) {
			t.Errorf("interrupt after %v: end %+v, %d rundown events; want a complete stream with its rundown", after, end, c.rundown)
		}
		if code := st.ExitCode(); code != 130 {
			t.Errorf("interrupt after %v: exit %d, want 130", after, code)
		}
	}
}

// TestLaunchDuration: Spec.Duration stops the session, then ends the
// program with SIGTERM; that death is not the program's failure (exit 0).
func TestLaunchDuration(t *testing.T) {
	var notes []string
	st, err := Open(Spec{Argv: workload.Argv(t, "idle", "seconds=60"), Providers: gcProviders, Duration: time.Second,
		Notice: func(s string) { notes = append(notes, s) }, ProgramStderr: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	c := &gcCounter{}
	start := time.Now()
	end, err := st.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	took := time.Since(start)
	// One second, plus the rundown and the program's exit on a loaded
	// machine: well under the program's own 60 s.
	if took < time.Second || took > 20*time.Second || st.ExitCode() != 0 || end.Truncated != nil || end.TargetExited || c.rundown == 0 {
		t.Errorf("took %v, exit %d, end %+v, %d rundown", took, st.ExitCode(), end, c.rundown)
	}
	if len(notes) != 1 {
		t.Errorf("notices %q, want the --duration one", notes)
	}
}

// TestAttachTargetExit: a session on a process that exits ends with the
// process, and says so; the process's name is in the stream's name.
func TestAttachTargetExit(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=2", "gcEveryMs=100")
	st, err := Open(Spec{Pid: p.Pid, Providers: gcProviders})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Kind != Attach || st.Pid != p.Pid || st.Name != fmt.Sprintf("pid %d (Workload)", p.Pid) {
		t.Errorf("stream %q %v %d", st.Name, st.Kind, st.Pid)
	}
	c := &gcCounter{}
	end, err := st.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if !end.TargetExited || c.gcs == 0 {
		t.Errorf("end %+v with %d GCs, want the target's exit", end, c.gcs)
	}
	if st.ExitCode() != 0 {
		t.Errorf("attached stream exit code %d", st.ExitCode())
	}
}

// TestAttachStop: Stop ends an attached session with its rundown; the
// process goes on.
func TestAttachStop(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=30", "gcEveryMs=50")
	st, err := Open(Spec{Pid: p.Pid, Providers: gcProviders})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	time.AfterFunc(500*time.Millisecond, st.Stop)
	c := &gcCounter{}
	end, err := st.Run(c)
	if err != nil {
		t.Fatal(err)
	}
	if end.TargetExited || end.Truncated != nil || c.rundown == 0 || p.Exited() {
		t.Errorf("end %+v, %d rundown, target exited %v", end, c.rundown, p.Exited())
	}
}

// TestListen: two runtimes connect to one diagnostic port, suspended; one
// gets a session from its first GC on (every GC the runtime counts is in
// the stream), the other is resumed without one and runs to its end.
func TestListen(t *testing.T) {
	l, err := ListenAt(filepath.Join(t.TempDir(), "port.sock"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	env := []string{l.EnvVar()}
	// Built here, on the test's goroutine (a skip under -short must not
	// happen inside the goroutines below, which Accept waits for).
	workload.Exe(t)
	// workload.Start waits for "ready", printed once resumed: start both
	// in the background.
	procs := make(chan *workload.Proc, 2)
	for _, mode := range []string{"induced", "idle"} {
		go func() {
			args := []string{"gen0=4", "gen1=2", "gen2=1"}
			if mode == "idle" {
				args = []string{"seconds=1", "gcEveryMs=50"}
			}
			procs <- workload.Start(t, env, mode, args...)
		}()
	}
	var streams []*Stream
	for i := 0; i < 2; i++ {
		r, err := l.Accept()
		if err != nil {
			t.Fatal(err)
		}
		if r.Name() != "Workload" || r.HostPid() != r.Pid {
			t.Errorf("runtime %d: name %q, host pid %d", r.Pid, r.Name(), r.HostPid())
		}
		if i == 1 {
			// The second is let go unmonitored.
			if err := r.Resume(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		st, err := r.Open(Spec{Providers: gcProviders})
		if err != nil {
			t.Fatal(err)
		}
		if st.Kind != Listen || st.Pid != r.Pid || st.Name != fmt.Sprintf("pid %d (Workload)", r.Pid) || st.ProcName() != "Workload" || st.ProcessStart().IsZero() {
			t.Errorf("stream %q %v pid %d, proc name %q, start %v", st.Name, st.Kind, st.Pid, st.ProcName(), st.ProcessStart())
		}
		if info, err := st.ProcessInfo(); err != nil || int(info.Pid) != r.Pid {
			t.Errorf("ProcessInfo over the port: %+v, %v", info, err)
		}
		streams = append(streams, st)
	}
	p1, p2 := <-procs, <-procs
	c := &gcCounter{}
	end, err := streams[0].Run(c)
	if err != nil {
		t.Fatal(err)
	}
	streams[0].Close()
	// Either runtime may connect first: the monitored one is whichever
	// was accepted first. Its stream has every GC its runtime counted
	// (GC.CollectionCount(0) counts GCs of every generation): the session
	// was open before it ran.
	var monitored *workload.Proc
	for _, p := range []*workload.Proc{p1, p2} {
		res, err := p.Wait(60 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if p.Pid == streams[0].Pid {
			monitored = p
			if c.gcs != res.Gen0 || res.Gen0 == 0 || !end.TargetExited || end.EventsLost != 0 {
				t.Errorf("%d GC starts in the stream of pid %d (%s: %d GCs), end %+v", c.gcs, p.Pid, res.Mode, res.Gen0, end)
			}
		}
	}
	if monitored == nil {
		t.Errorf("stream of pid %d: no workload with that pid (%d, %d)", streams[0].Pid, p1.Pid, p2.Pid)
	}
}

// TestLaunchHangAtExit: a launched program that does not exit after its
// session ended (here it ignores the SIGTERM passed on to it; a runtime bug
// can hang it in its exit) does not hang clrspy: it is killed after the
// grace period, and its status says so (128+SIGKILL).
func TestLaunchHangAtExit(t *testing.T) {
	defer func(g time.Duration) { exitGrace = g }(exitGrace)
	exitGrace = 2 * time.Second
	var notes []string
	stderr := &lockedBuffer{}
	st, err := Open(Spec{Argv: workload.Argv(t, "idle", "seconds=60", "ignoreTerm=1"), Providers: gcProviders,
		Notice: func(s string) { notes = append(notes, s) }, ProgramStderr: stderr})
	if err != nil {
		t.Fatal(err)
	}
	// Only once the program ignores SIGTERM (a loaded machine may take
	// seconds to get there).
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "ignoring SIGTERM") {
		if time.Now().After(deadline) {
			t.Fatalf("the workload never got to ignore SIGTERM: %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	st.Interrupt(syscall.SIGTERM)
	if _, err := st.Run(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	st.Close()
	waited := time.Since(start)
	if code := st.ExitCode(); code != 128+int(syscall.SIGKILL) || waited < exitGrace || waited > exitGrace+10*time.Second {
		t.Errorf("exit %d after waiting %v, want 137 after about %v", code, waited, exitGrace)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "has not exited 2s after its session ended: killing it") {
		t.Errorf("notices %q", notes)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a poller.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
