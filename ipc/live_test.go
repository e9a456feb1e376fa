package ipc

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
)

// traceCounts reads a whole session stream and counts what the tests check.
type traceCounts struct {
	events, gcStarts, gen2Starts, rundownMethods, lost uint64
	pid                                                int
}

func readTrace(t *testing.T, r io.Reader) traceCounts {
	t.Helper()
	nr, err := nettrace.NewReader(r)
	if err != nil {
		t.Fatalf("stream header: %v", err)
	}
	var c traceCounts
	err = tracetest.ReadAll(t, nr, func(ev *nettrace.Event) {
		c.events++
		switch {
		case ev.Meta.Runtime == nettrace.Runtime && ev.Meta.EventID == 1:
			c.gcStarts++
			// GCStart: Count u32, Depth u32.
			if len(ev.Payload) >= 8 && binary.LittleEndian.Uint32(ev.Payload[4:]) == 2 {
				c.gen2Starts++
			}
		case ev.Meta.Runtime == nettrace.Rundown && (ev.Meta.EventID == 143 || ev.Meta.EventID == 144):
			c.rundownMethods++
		}
	})
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	c.lost = nr.Stats().LostEvents
	c.pid = nr.Header().ProcessID
	return c
}

var gcProviders = []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordGC, Level: LevelInformational}}

// Launch mode: the runtime waits at startup for the session, so the trace
// holds every GC the program reports, gen2 ones included.
func TestReverseLaunchSeesEveryGC(t *testing.T) {
	port, err := ListenReverse()
	if err != nil {
		t.Fatal(err)
	}
	defer port.Close()
	cmd := exec.Command(workload.Exe(t), "churn", "iterations=1500", "gen2=1")
	cmd.Env = append(os.Environ(), port.EnvVar())
	var out strings.Builder
	cmd.Stdout = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	c, err := port.AcceptOnly(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if c.Pid != cmd.Process.Pid {
		t.Fatalf("advertised pid %d, started %d", c.Pid, cmd.Process.Pid)
	}
	s, err := c.StartSession(SessionConfig{Providers: gcProviders})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := c.ResumeRuntime(); err != nil {
		t.Fatal(err)
	}
	got := readTrace(t, s)
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	r, err := workload.ParseResult([]byte(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if int(got.gcStarts) != r.Gen0 || int(got.gen2Starts) != r.Gen2 {
		t.Errorf("trace has %d GCs (%d gen2), the runtime counted %d (%d gen2)", got.gcStarts, got.gen2Starts, r.Gen0, r.Gen2)
	}
	if r.Gen2 < 1 {
		t.Errorf("churn made no gen2 GC")
	}
	if got.pid != cmd.Process.Pid {
		t.Errorf("trace header pid %d, want %d", got.pid, cmd.Process.Pid)
	}
	// The target exited: the stream still ended cleanly, with the rundown.
	if got.rundownMethods == 0 {
		t.Errorf("no rundown method events at process exit")
	}
}

// Attach, ProcessInfo, every CollectTracing version the runtime knows, and
// Stop with rundown on a new connection.
func TestAttachEveryCommandVersion(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "gcEveryMs=50", "stdin=1")
	c, err := Dial(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.ProcessInfo()
	if err != nil {
		t.Fatal(err)
	}
	if info.Command != 3 || int(info.Pid) != p.Pid || !strings.HasPrefix(info.RuntimeVersion, "10.") && workload.TFM() == "net10.0" ||
		info.Arch != "x64" || info.OS != "Linux" || !strings.Contains(info.CommandLine, "idle") || info.RID == "" {
		t.Errorf("ProcessInfo %+v", info)
	}
	for v := 2; v <= 5; v++ {
		s, err := c.StartSession(SessionConfig{Command: v, Providers: gcProviders, BufferMB: 16})
		if err != nil {
			t.Fatalf("CollectTracing%d: %v", v, err)
		}
		stopErr := stopLater(s, 300*time.Millisecond)
		got := readTrace(t, s)
		if err := <-stopErr; err != nil {
			t.Fatalf("StopTracing after CollectTracing%d: %v", v, err)
		}
		s.Close()
		if s.Command != min(v, maxCollectTracing()) || got.gcStarts == 0 || got.rundownMethods == 0 || got.lost != 0 {
			t.Errorf("CollectTracing%d (accepted as %d): %d GCs, %d rundown methods, %d lost", v, s.Command, got.gcStarts, got.rundownMethods, got.lost)
		}
	}
	// No rundown asked: none arrives.
	s, err := c.StartSession(SessionConfig{NoRundown: true, Providers: gcProviders})
	if err != nil {
		t.Fatal(err)
	}
	stopLater(s, 200*time.Millisecond)
	if got := readTrace(t, s); got.rundownMethods != 0 {
		t.Errorf("%d rundown events without rundown", got.rundownMethods)
	}
	s.Close()
	// A bad request becomes the HRESULT's name.
	_, err = c.StartSession(SessionConfig{Providers: []Provider{{Name: nettrace.ProviderRuntime, Level: 9}}})
	var se *ServerError
	if !errors.As(err, &se) || se.HResult != HRBadEncoding || !strings.Contains(err.Error(), "DS_IPC_E_BAD_ENCODING") {
		t.Errorf("level 9: err = %v, want DS_IPC_E_BAD_ENCODING", err)
	}
	p.Release()
	if _, err := p.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// A session whose target exits ends with everything received and no error.
func TestTargetExitEndsStream(t *testing.T) {
	p := workload.Start(t, nil, "idle", "seconds=60", "gcEveryMs=20", "stdin=1")
	c, err := Dial(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.StartSession(SessionConfig{Providers: gcProviders})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(500 * time.Millisecond)
	p.Release()
	got := readTrace(t, s) // fails on a truncated stream
	r, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.gcStarts == 0 || int(got.gcStarts) > r.Gen0 {
		t.Errorf("%d GCs in the trace, %d in the process", got.gcStarts, r.Gen0)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

func TestFindErrors(t *testing.T) {
	_, err := Find(999999999)
	if err == nil || err.Error() != "pid 999999999: no such process" {
		t.Errorf("err = %v", err)
	}
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	_, err = Find(sleep.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "sleep is not a .NET process") {
		t.Errorf("err = %v", err)
	}
	p := workload.Start(t, []string{"DOTNET_EnableDiagnostics=0"}, "idle", "seconds=30", "stdin=1")
	_, err = Find(p.Pid)
	if err == nil || !strings.Contains(err.Error(), "DOTNET_EnableDiagnostics=0") {
		t.Errorf("err = %v", err)
	}
	p.Release()
}

// A .NET process with its diagnostics turned off, whose pid an exited
// .NET process used before (its socket left in TMPDIR), is reported as
// disabled, not as a stale socket nothing listens on (a CI run met this
// by chance in TestBadTargets).
func TestReusedPidDiagnosticsOff(t *testing.T) {
	dir := t.TempDir()
	p := workload.Start(t, []string{"TMPDIR=" + dir, "DOTNET_EnableDiagnostics=0"}, "idle", "seconds=30", "stdin=1")
	stale := dir + "/dotnet-diagnostic-" + itoa(p.Pid) + "-1-socket"
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Find(p.Pid)
	if want := "pid " + itoa(p.Pid) + ": diagnostics are disabled in this process (DOTNET_EnableDiagnostics=0)"; err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
	p.Release()
}

// A socket left by a dead process with the same pid (a reused pid) is not
// taken for the live one's.
func TestStaleSocketIgnored(t *testing.T) {
	dir := t.TempDir()
	p := workload.Start(t, []string{"TMPDIR=" + dir}, "idle", "seconds=30", "stdin=1")
	stale := dir + "/dotnet-diagnostic-" + itoa(p.Pid) + "-1-socket"
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	os.Chtimes(stale, future, future) // newest: only the key tells them apart
	ep, err := Find(p.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if ep.Socket == stale || !strings.HasSuffix(ep.Socket, "-"+startTicks(p.Pid)+"-socket") {
		t.Fatalf("found %s", ep.Socket)
	}
	c, _ := Dial(p.Pid)
	if _, err := c.ProcessInfo(); err != nil {
		t.Fatal(err)
	}
	p.Release()
}

// A process that is not .NET, whose pid an exited .NET process used
// before (its socket left in /tmp), is reported as not .NET, not as a
// stale socket nothing listens on (a CI run met this by chance).
func TestReusedPidNotDotnet(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	stale := "/tmp/dotnet-diagnostic-" + itoa(sleep.Process.Pid) + "-1-socket"
	if err := os.WriteFile(stale, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(stale)
	_, err := Find(sleep.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "sleep is not a .NET process") {
		t.Errorf("err = %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// stopLater stops s after d, while the caller reads the stream.
func stopLater(s *Session, d time.Duration) chan error {
	ch := make(chan error, 1)
	go func() {
		time.Sleep(d)
		ch <- s.Stop()
	}()
	return ch
}

// maxCollectTracing is the newest CollectTracing the test runtime knows:
// older runtimes answer UNKNOWN_COMMAND to newer ones and the client falls
// back.
func maxCollectTracing() int {
	switch workload.TFM() {
	case "net8.0":
		return 2
	case "net9.0":
		return 4
	}
	return 5
}

// A TMPDIR so long that the socket path would pass the 108-byte limit: the
// runtime cannot create its socket, and the error says why.
func TestLongTmpDir(t *testing.T) {
	dir := t.TempDir()
	long := dir + "/" + strings.Repeat("d", 100-len(dir))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	p := workload.Start(t, []string{"TMPDIR=" + long}, "idle", "seconds=30", "stdin=1")
	_, err := Find(p.Pid)
	if err == nil || !strings.Contains(err.Error(), "over the 107-byte limit of Unix socket paths") || !strings.Contains(err.Error(), "shorter TMPDIR") {
		t.Errorf("err = %v", err)
	}
	p.Release()
}

// dialUnix reaches a listening socket whose path is over the limit through
// /proc/self/fd of its directory.
func TestDialLongPath(t *testing.T) {
	dir := t.TempDir()
	long := dir + "/" + strings.Repeat("e", 120-len(dir))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	// Listen through the same short name the dialer uses.
	d, err := os.Open(long)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	ln, err := net.Listen("unix", "/proc/self/fd/"+strconv.Itoa(int(d.Fd()))+"/s")
	if err != nil {
		t.Skipf("cannot bind through /proc/self/fd here: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Write([]byte("ok"))
			c.Close()
		}
	}()
	path := long + "/s"
	if len(path) < maxSunPath {
		t.Fatalf("test path only %d bytes", len(path))
	}
	c, err := dialUnix(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	c.Close()
	if string(b) != "ok" {
		t.Fatalf("read %q", b)
	}
}
