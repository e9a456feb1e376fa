package monitor

import (
	"cmp"
	"path"
	"strings"
	"time"

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
	UptimeSec       float64 `json:"uptime_s"`
	UptimeFromStart bool    `json:"uptime_from_start"`
	// GC is the GC's configuration (gcpause's Flavor: the startup flags
	// when the stream had them, else what the GCs show).
	GC gcpause.Flavor `json:"gc"`
}

// fromRunInfo fills what the diagnostics IPC did not say from what the
// stream did (package runinfo: the rundown's RuntimeInformation, which a
// live session gets when it stops and a trace file carries, and the
// EventPipe's ProcessInfo, a trace file's only record of the command
// line). It returns the runtime's startup flags (gcpause.Flavor's first
// evidence).
func (p *Process) fromRunInfo(info runinfo.Info) gcpause.Startup {
	p.CommandLine = cmp.Or(p.CommandLine, info.CommandLine)
	p.OS, p.Arch = cmp.Or(p.OS, info.OS), cmp.Or(p.Arch, info.Arch)
	p.RuntimeVersion = cmp.Or(p.RuntimeVersion, info.Runtime)
	p.Name = cmp.Or(p.Name, nameFromCommandLine(p.CommandLine))
	return gcpause.Startup{Known: info.GC != "", Server: info.ServerGC, Concurrent: info.ConcurrentGC}
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
