package devprof

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/clrspy/clrspy/internal/procfs"
)

// Start writes clrspy's own CPU profile to $CLRSPY_CPUPROFILE, and
// its heap profile (what was allocated, by whom) to $CLRSPY_MEMPROFILE at
// exit, when they are set: how the figures in docs/PERFORMANCE.md were
// broken down. The returned function stops them.
func Start() func() {
	stopMem := func() {}
	if mp := os.Getenv("CLRSPY_MEMPROFILE"); mp != "" {
		stopMem = func() {
			f, err := os.Create(mp)
			if err != nil {
				fmt.Fprintln(os.Stderr, "clrspy: CLRSPY_MEMPROFILE:", err)
				return
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				fmt.Fprintln(os.Stderr, "clrspy: CLRSPY_MEMPROFILE:", err)
			}
		}
	}
	path := os.Getenv("CLRSPY_CPUPROFILE")
	if path == "" {
		return stopMem
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "clrspy: CLRSPY_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "clrspy: CLRSPY_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		stopMem()
	}
}

// Phase writes, when $CLRSPY_PHASES is set, one line to stderr at the
// end of a phase of a command: the time since the process started, the
// resident memory now and at its peak so far (VmRSS, VmHWM), and the Go
// heap's in-use and from-the-system bytes: where the peak RSS of the
// figures in docs/PERFORMANCE.md comes from.
func Phase(name string) {
	if os.Getenv("CLRSPY_PHASES") == "" {
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, hwm := "?", "?"
	if b, err := procfs.Status(procfs.Self); err == nil {
		if f := procfs.StatusField(b, "VmRSS"); len(f) > 0 {
			rss = f[0]
		}
		if f := procfs.StatusField(b, "VmHWM"); len(f) > 0 {
			hwm = f[0]
		}
	}
	fmt.Fprintf(os.Stderr, "clrspy: phase %-14s %7.3f s  rss %s kB  peak %s kB  go heap in use %d kB, from the system %d kB\n",
		name, time.Since(processStart).Seconds(), rss, hwm, ms.HeapInuse>>10, (ms.HeapSys-ms.HeapReleased)>>10)
}

// processStart is when the process started (near enough: package init).
var processStart = time.Now()
