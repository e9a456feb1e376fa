package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Gen0Budget is the gen0 allocation budget (DOTNET_GCgen0size) every
// process the tests start runs with, unless the environment already sets
// one. The runtime derives the default from the L3 cache size: 16 MB on the
// 32 MB-L3 machine the tests were written on, but a CI machine with a larger
// cache made one GC where the tests expect nine (churn) and none after
// 64 MB (counters), which no assertion about "what the runtime counted"
// can survive. Pinned, a workload makes the same GCs on every machine.
const Gen0Budget = "0x1000000"

func init() {
	// Set in this (test) process so that every child inherits it: the
	// workloads started here and those clrspy launches itself.
	if _, ok := os.LookupEnv("DOTNET_GCgen0size"); !ok {
		os.Setenv("DOTNET_GCgen0size", Gen0Budget)
	}
}

// DefaultTFM is the framework the workload targets unless
// CLRSPY_WORKLOAD_TFM says otherwise.
const DefaultTFM = "net10.0"

var (
	buildOnce sync.Once
	buildExe  string
	buildErr  error
)

// TFM is the target framework the tests use.
func TFM() string {
	if v := os.Getenv("CLRSPY_WORKLOAD_TFM"); v != "" {
		return v
	}
	return DefaultTFM
}

// RepoRoot finds the module root by walking up from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = up
	}
}

// Exe builds the workload (once per process) and returns the path of its
// executable. It fails the test when dotnet is missing or the build fails.
func Exe(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		// go test -short: the library tests alone, no .NET build or run.
		tb.Skip("needs dotnet (the workload): not run with -short")
	}
	buildOnce.Do(func() { buildExe, buildErr = build(TFM()) })
	if buildErr != nil {
		tb.Fatalf("building the workload: %v", buildErr)
	}
	return buildExe
}

func build(tfm string) (string, error) {
	p := Project{
		Dir:       "testdata/workloads/Workload",
		Name:      "Workload",
		Out:       "testdata/workloads/bin/" + tfm,
		Artifacts: "testdata/workloads/obj/" + tfm,
		Lock:      "testdata/workloads/build.lock",
		Args:      []string{"-p:WorkloadTfm=" + tfm},
	}
	if tfm != DefaultTFM {
		p.Args = append(p.Args, "-r", "linux-x64", "--self-contained")
	}
	return Build(p)
}

// Project is a .NET console program of the test tree. Paths are relative
// to the module root.
type Project struct {
	Dir       string   // the project directory (holds Name.csproj)
	Name      string   // the executable's name
	Out       string   // dotnet build -o
	Artifacts string   // dotnet build --artifacts-path
	Lock      string   // the flock that serialises builds of this project
	Args      []string // more dotnet build arguments
}

// Build builds p in Release (unless its executable is newer than every
// source) and returns the executable's path. Builds of one project by
// several test binaries or engineers at once are serialised with a flock.
func Build(p Project) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	proj := filepath.Join(root, p.Dir)
	out := filepath.Join(root, p.Out)
	exe := filepath.Join(out, p.Name)
	lock, err := os.OpenFile(filepath.Join(root, p.Lock), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking the %s build: %w", p.Name, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if upToDate(proj, filepath.Join(out, p.Name+".dll")) {
		return exe, nil
	}
	if _, err := exec.LookPath("dotnet"); err != nil {
		return "", fmt.Errorf("dotnet is not on PATH: building %s needs the .NET SDK", p.Name)
	}
	args := append([]string{"build", proj, "-c", "Release", "-o", out, "-nologo", "-v", "quiet",
		"--artifacts-path", filepath.Join(root, p.Artifacts)}, p.Args...)
	cmd := exec.Command("dotnet", args...)
	cmd.Env = append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1", "DOTNET_NOLOGO=1",
		"DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1", "MSBUILDDISABLENODEREUSE=1", "DOTNET_CLI_UI_LANGUAGE=en")
	b, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("dotnet build: %w\n%s", err, b)
	}
	if _, err := os.Stat(exe); err != nil {
		return "", fmt.Errorf("dotnet build left no %s", exe)
	}
	return exe, nil
}

// upToDate reports whether built is newer than every source of proj.
func upToDate(proj, built string) bool {
	st, err := os.Stat(built)
	if err != nil {
		return false
	}
	newer := false
	filepath.WalkDir(proj, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (d.Name() == "bin" || d.Name() == "obj") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(p, ".cs") || strings.HasSuffix(p, ".csproj")) {
			if i, err := d.Info(); err == nil && i.ModTime().After(st.ModTime()) {
				newer = true
			}
		}
		return nil
	})
	return !newer
}

// Argv is the command line that runs mode with args, for clrspy's
// "-- CMD ARGS" launch form.
func Argv(tb testing.TB, mode string, args ...string) []string {
	return append([]string{Exe(tb), mode}, args...)
}

// Proc is a running workload.
type Proc struct {
	Cmd    *exec.Cmd
	Pid    int
	stdout bytes.Buffer
	stderr LockedBuffer
	stdin  io.WriteCloser
	done   chan struct{}
	err    error
}

// LockedBuffer is a bytes.Buffer safe for a writer and a reader at once
// (a process's output, a daemon's log).
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Start runs mode with args (key=value options) and extra environment
// ("K=V"), waits until the runtime is up (the "ready" line) and registers a
// cleanup that kills it if the test did not wait for it.
func Start(tb testing.TB, env []string, mode string, args ...string) *Proc {
	tb.Helper()
	return StartCmd(tb, exec.Command(Exe(tb), append([]string{mode}, args...)...), env)
}

// StartCmd is Start for a prepared command (for example one run under
// another uid or namespace); cmd.Path must run the workload.
func StartCmd(tb testing.TB, cmd *exec.Cmd, env []string) *Proc {
	tb.Helper()
	p := &Proc{Cmd: cmd, done: make(chan struct{})}
	cmd.Env = append(append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1"), env...)
	cmd.Stdout = &p.stdout
	pr, pw := io.Pipe()
	cmd.Stderr = io.MultiWriter(&p.stderr, pw)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	p.stdin = in
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting the workload: %v", err)
	}
	p.Pid = cmd.Process.Pid
	go func() {
		p.err = cmd.Wait()
		pw.Close()
		close(p.done)
	}()
	tb.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		found := false
		for sc.Scan() {
			if !found && strings.HasPrefix(sc.Text(), "ready ") {
				found = true
				ready <- true
			}
		}
		if !found {
			ready <- false
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case ok := <-ready:
		if !ok {
			<-p.done
			tb.Fatalf("workload exited before it was ready: %v\n%s", p.err, p.stderr.String())
		}
	case <-time.After(60 * time.Second):
		tb.Fatalf("workload not ready after 60 s:\n%s", p.stderr.String())
	}
	return p
}

// Release sends a line to the workload's stdin (for wait=1, idle stdin=1
// or a phases=1 mark).
func (p *Proc) Release() { io.WriteString(p.stdin, "go\n") }

// Stdin writes s to the workload's stdin.
func (p *Proc) Stdin(s string) { io.WriteString(p.stdin, s) }

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the workload to exit (at most timeout) and parses its
// result line.
func (p *Proc) Wait(timeout time.Duration) (*Result, error) {
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.Cmd.Process.Kill()
		<-p.done
		return nil, fmt.Errorf("workload did not exit within %v", timeout)
	}
	if p.err != nil {
		return nil, fmt.Errorf("workload: %w\n%s", p.err, p.stderr.String())
	}
	return ParseResult(p.stdout.Bytes())
}

// Stderr is what the workload wrote to stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// GCInfo is GC.GetGCMemoryInfo for one kind of GC.
type GCInfo struct {
	Index               int64     `json:"index"`
	Generation          int       `json:"generation"`
	Compacted           bool      `json:"compacted"`
	Concurrent          bool      `json:"concurrent"`
	PauseDurationsMs    []float64 `json:"pauseDurationsMs"`
	PauseTimePercentage float64   `json:"pauseTimePercentage"`
	PromotedBytes       int64     `json:"promotedBytes"`
	HeapSizeBytes       int64     `json:"heapSizeBytes"`
	FragmentedBytes     int64     `json:"fragmentedBytes"`
	PinnedObjectsCount  int64     `json:"pinnedObjectsCount"`
}

// Result is the JSON line a workload prints on exit.
type Result struct {
	Mode                string            `json:"mode"`
	Pid                 int               `json:"pid"`
	Runtime             string            `json:"runtime"`
	ServerGC            bool              `json:"serverGC"`
	ConcurrentGC        bool              `json:"concurrentGC"`
	Gen0                int               `json:"gen0"`
	Gen1                int               `json:"gen1"`
	Gen2                int               `json:"gen2"`
	PauseMs             float64           `json:"pauseMs"`
	TotalAllocatedBytes int64             `json:"totalAllocatedBytes"`
	ElapsedMs           float64           `json:"elapsedMs"`
	GCInfo              map[string]GCInfo `json:"gcInfo"`
	// Work is the mode's own measurements; decode a field with Float, Int
	// or Get.
	Work map[string]json.RawMessage `json:"work"`
}

// ParseResult finds the workload's JSON line in out (the last line that
// starts with '{'; clrspy run may print before it).
func ParseResult(out []byte) (*Result, error) {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if len(l) == 0 || l[0] != '{' || !bytes.Contains(l, []byte(`"mode"`)) {
			continue
		}
		var r Result
		if err := json.Unmarshal(l, &r); err != nil {
			return nil, fmt.Errorf("workload result: %w", err)
		}
		return &r, nil
	}
	return nil, fmt.Errorf("no workload result line in %q", out)
}

// Get decodes the work field key into v.
func (r *Result) Get(key string, v any) error {
	raw, ok := r.Work[key]
	if !ok {
		return fmt.Errorf("workload result has no work field %q", key)
	}
	return json.Unmarshal(raw, v)
}

// Float is the work field key as a number (0 when absent).
func (r *Result) Float(key string) float64 {
	var f float64
	r.Get(key, &f)
	return f
}

// Int is the work field key as an integer (0 when absent).
func (r *Result) Int(key string) int64 {
	var f float64
	r.Get(key, &f)
	return int64(f)
}
