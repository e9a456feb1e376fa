package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// startDevProfile writes clrspy's own CPU profile to $CLRSPY_CPUPROFILE, and
// its heap profile (what was allocated, by whom) to $CLRSPY_MEMPROFILE at
// exit, when they are set: how the figures in docs/PERFORMANCE.md were
// broken down. The returned function stops them.
func startDevProfile() func() {
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
