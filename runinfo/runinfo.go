package runinfo

import (
	"fmt"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Info is what the stream said; fields it did not carry are empty.
type Info struct {
	CommandLine string `json:"command_line,omitempty"`
	OS          string `json:"os,omitempty"`
	Arch        string `json:"arch,omitempty"`
	// Runtime is the runtime's product version ("10.0.12"); "" unknown.
	Runtime string `json:"runtime,omitempty"`
	// GC is "workstation" or "server", with ", concurrent" or
	// ", non-concurrent"; "" when no RuntimeInformation event was seen.
	GC string `json:"gc,omitempty"`
	// ServerGC and ConcurrentGC are valid when GC is not "".
	ServerGC     bool `json:"server_gc"`
	ConcurrentGC bool `json:"concurrent_gc"`
}

// Analyzer collects Info.
type Analyzer struct {
	hdr   *nettrace.Header
	info  Info
	stats analysis.Stats
}

// New returns an Analyzer for a stream with header hdr.
func New(hdr *nettrace.Header) *Analyzer { return &Analyzer{hdr: hdr} }

// Event implements analysis.Analyzer.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	switch {
	case (m.Runtime == nettrace.Runtime || m.Runtime == nettrace.Rundown) && m.EventID == clrevents.IDRuntimeInformation:
		ri, err := clrevents.DecodeRuntimeInformation(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.stats.Failed(err) {
			return
		}
		a.stats.Used()
		if ri.BclMajor != 0 {
			a.info.Runtime = fmt.Sprintf("%d.%d.%d", ri.BclMajor, ri.BclMinor, ri.BclBuild)
		}
		a.info.ServerGC, a.info.ConcurrentGC = ri.ServerGC(), ri.ConcurrentGC()
		a.info.GC = "workstation"
		if ri.ServerGC() {
			a.info.GC = "server"
		}
		if ri.ConcurrentGC() {
			a.info.GC += ", concurrent"
		} else {
			a.info.GC += ", non-concurrent"
		}
		if a.info.CommandLine == "" && ri.CommandLine != "" {
			a.info.CommandLine = ri.CommandLine
		}
	case m.Runtime == nettrace.EventPipe && m.EventID == clrevents.IDProcessInfo:
		pi, err := clrevents.DecodeProcessInfo(ev.Payload, m.Version, a.hdr.PointerSize)
		if a.stats.Failed(err) {
			return
		}
		a.stats.Used()
		if pi.CommandLine != "" {
			a.info.CommandLine = pi.CommandLine
		}
		a.info.OS, a.info.Arch = pi.OS, pi.Arch
	}
}

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats { return a.stats }

// Result is the information so far.
func (a *Analyzer) Result() Info { return a.info }
