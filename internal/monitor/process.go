package monitor

import (
	"cmp"
	"path"
	"strings"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/runinfo"
)

// Process is what is known about the target.
type Process struct {
	Pid            int    `json:"pid"`
	Name           string `json:"name"`
	CommandLine    string `json:"command_line,omitempty"`
	RuntimeVersion string `json:"runtime_version,omitempty"` // "10.0.12"
	OS             string `json:"os,omitempty"`
	Arch           string `json:"arch,omitempty"`
	// StartUTC is when the process started (zero: unknown).
	StartUTC time.Time `json:"start_utc"`
	// UptimeSec is the process' age at the latest event; the session's
	// age when the process start is unknown (UptimeFromStart false).
	UptimeSec       float64  `json:"uptime_s"`
	UptimeFromStart bool     `json:"uptime_from_start"`
	GC              GCFlavor `json:"gc"`
}

// GCFlavor is the GC's configuration, as far as the events tell.
type GCFlavor struct {
	// Kind is "server", "workstation", or "" while unknown.
	Kind string `json:"kind"`
	// KindFrom says how Kind is known: "startup_flags" (the runtime's own
	// configuration, in the rundown at the session's end or in a trace
	// file), "heap_count" (a GC ran on more than one heap: server), or
	// "gc_thread" (whether GCs run on the thread that triggered them, as
	// workstation GCs do, or on dedicated GC threads, as server GCs do;
	// decided by the majority of the GCs seen).
	KindFrom string `json:"kind_from,omitempty"`
	// Concurrent: background GCs are enabled; null while unknown.
	Concurrent *bool `json:"concurrent"`
	// ConcurrentFrom: "startup_flags", "pause_mode" (the latency mode of
	// the last GC: Batch means no background GCs, which is how the runtime
	// applies gcConcurrent=0, and also what GCSettings.LatencyMode = Batch
	// does), or "background_gc" (one was seen).
	ConcurrentFrom string `json:"concurrent_from,omitempty"`
	// Heaps is the number of GC heaps in the last GC that reported them
	// (server GC with dynamic adaptation starts with one), from gcpause's
	// row of that GC: the heap count the page's rows show.
	Heaps int `json:"heaps"`
	// LatencyMode of the last GC: Batch, Interactive, LowLatency,
	// SustainedLowLatency, NoGCRegion.
	LatencyMode string `json:"latency_mode,omitempty"`
}

// String is "server, concurrent" and the like ("unknown" before any GC).
func (f GCFlavor) String() string {
	k := f.Kind
	if k == "" {
		k = "unknown"
	}
	switch {
	case f.Concurrent == nil:
		return k
	case *f.Concurrent:
		return k + ", concurrent"
	}
	return k + ", non-concurrent"
}

// flavorState collects the evidence for GCFlavor.
type flavorState struct {
	startupFlags             bool
	server, concurrent       bool
	maxHeaps, heaps          int
	pauseMode                uint32
	hasPauseMode, background bool
	// Thread evidence: GCTriggered's thread vs the next GCStart's.
	trigger                 uint64
	hasTrigger              bool
	sameThread, otherThread int
}

func (f *flavorState) triggered(tid uint64) { f.trigger, f.hasTrigger = tid, true }

func (f *flavorState) gcStart(tid uint64, typ clrevents.GCType) {
	if typ == clrevents.GCBackground {
		f.background = true
	}
	if f.hasTrigger && typ != clrevents.GCBackground {
		if tid == f.trigger {
			f.sameThread++
		} else {
			f.otherThread++
		}
	}
	f.hasTrigger = false
}

// gc takes the heap count and latency mode from gcpause's row of a GC (as
// the file's page does), not from the history events themselves: gcpause
// gives each history to the GC that wrote it, so a background GC's
// history written during a foreground GC cannot change the foreground
// GC's heap count here while the file's rows keep it apart. The heap count
// is the row's: the per-heap histories it got (the page's "N heaps"), or
// the global history's NumHeaps when no per-heap history came.
func (f *flavorState) gc(g *gcpause.GC) {
	n := 0
	switch {
	case g.HasPerHeap:
		n = g.Heaps
	case g.HasGlobal:
		n = g.NumHeaps
	}
	if n > 0 {
		f.heaps = n
		f.maxHeaps = max(f.maxHeaps, n)
	}
	if g.HasPauseMode {
		f.pauseMode, f.hasPauseMode = g.PauseMode, true
	}
}

var latencyModes = []string{"Batch", "Interactive", "LowLatency", "SustainedLowLatency", "NoGCRegion"}

func (f *flavorState) result() GCFlavor {
	var g GCFlavor
	g.Heaps = f.heaps
	yes, no := true, false
	switch {
	case f.startupFlags:
		g.Kind, g.KindFrom = kindName(f.server), "startup_flags"
	case f.maxHeaps > 1:
		g.Kind, g.KindFrom = "server", "heap_count"
	case f.sameThread+f.otherThread > 0:
		g.Kind, g.KindFrom = kindName(f.otherThread > f.sameThread), "gc_thread"
	}
	switch {
	case f.startupFlags:
		g.Concurrent, g.ConcurrentFrom = &no, "startup_flags"
		if f.concurrent {
			g.Concurrent = &yes
		}
	case f.background:
		g.Concurrent, g.ConcurrentFrom = &yes, "background_gc"
	case f.hasPauseMode:
		g.Concurrent, g.ConcurrentFrom = &yes, "pause_mode"
		if f.pauseMode == 0 {
			g.Concurrent = &no
		}
	}
	if f.hasPauseMode && int(f.pauseMode) < len(latencyModes) {
		g.LatencyMode = latencyModes[f.pauseMode]
	}
	return g
}

func kindName(server bool) string {
	if server {
		return "server"
	}
	return "workstation"
}

// fromRunInfo fills what the diagnostics IPC did not say from what the
// stream did (package runinfo: the rundown's RuntimeInformation, which a
// live session gets when it stops and a trace file carries, and the
// EventPipe's ProcessInfo, a trace file's only record of the command
// line); the runtime's startup flags decide the GC flavour.
func (p *Process) fromRunInfo(info runinfo.Info, f *flavorState) {
	p.CommandLine = cmp.Or(p.CommandLine, info.CommandLine)
	p.OS, p.Arch = cmp.Or(p.OS, info.OS), cmp.Or(p.Arch, info.Arch)
	p.RuntimeVersion = cmp.Or(p.RuntimeVersion, info.Runtime)
	p.Name = cmp.Or(p.Name, nameFromCommandLine(p.CommandLine))
	if info.GC != "" {
		f.startupFlags, f.server, f.concurrent = true, info.ServerGC, info.ConcurrentGC
	}
}

// nameFromCommandLine is the program's file name, the app's for
// "dotnet app.dll".
func nameFromCommandLine(cl string) string {
	f := strings.Fields(cl)
	if len(f) == 0 {
		return ""
	}
	n := path.Base(f[0])
	if (n == "dotnet" || n == "dotnet.exe") && len(f) > 1 && strings.HasSuffix(f[1], ".dll") {
		return strings.TrimSuffix(path.Base(f[1]), ".dll")
	}
	return n
}

// SetProcessInfo records what the diagnostics IPC's ProcessInfo said (a
// live target; package source's Stream.ProcessInfo asks for it).
func (m *Monitor) SetProcessInfo(info *ipc.ProcessInfo) {
	if info == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if info.Pid != 0 {
		m.proc.Pid = int(info.Pid)
	}
	if info.CommandLine != "" {
		m.proc.CommandLine = info.CommandLine
	}
	if info.RuntimeVersion != "" {
		m.proc.RuntimeVersion = info.RuntimeVersion
	}
	if info.OS != "" {
		m.proc.OS = info.OS
	}
	if info.Arch != "" {
		m.proc.Arch = info.Arch
	}
	if m.proc.Name == "" {
		m.proc.Name = nameFromCommandLine(info.CommandLine)
	}
}

// SetProcess sets the target's pid, name and start time (zero values are
// ignored).
func (m *Monitor) SetProcess(pid int, name string, start time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pid != 0 {
		m.proc.Pid = pid
	}
	if name != "" {
		m.proc.Name = name
	}
	if !start.IsZero() {
		m.proc.StartUTC = start.UTC()
	}
}
