package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/stacks"
)

// perfFlags are the perf sampler's flags.
type perfFlags struct {
	hz      int
	event   string
	perfMap bool
	offCPU  bool
}

func addPerfFlags(c *cobra.Command, sampler *string) *perfFlags {
	o := &perfFlags{}
	f := c.Flags()
	f.StringVar(sampler, "sampler", "auto", "live targets: perf (perf_event, mixed-mode), eventpipe (the runtime's sampler) or auto")
	f.IntVar(&o.hz, "hz", 99, "perf sampler: samples per second per thread")
	f.StringVar(&o.event, "event", "cpu-clock", "perf sampler: cpu-clock or cycles (where the hardware has a PMU)")
	f.BoolVar(&o.perfMap, "perf-map", false, "perf sampler, --pid/--name: ask the runtime (.NET 8+) for /tmp/perf-PID.map too (names stubs)")
	f.BoolVar(&o.offCPU, "off-cpu", false, "perf sampler: a wall-clock profile, the time threads spend off the CPU (blocked or waiting for one) weighed at the stack where they left it, beside the CPU samples (needs root or CAP_PERFMON and tracefs)")
	return o
}

func (o *perfFlags) options() perf.Options {
	return perf.Options{Hz: o.hz, Event: o.event, OffCPU: o.offCPU}
}

// chooseSampler resolves --sampler for this target: files always use the
// samples they hold; auto picks perf when the kernel permits it for the
// target and says why not otherwise.
func chooseSampler(sampler string, live bool, tgt *targetFlags, cmd *cobra.Command, args []string, opts perf.Options) (string, error) {
	switch sampler {
	case "perf", "eventpipe", "auto":
	default:
		return "", fmt.Errorf("unknown --sampler %q: use perf, eventpipe or auto", sampler)
	}
	if !live {
		if sampler == "perf" {
			return "", fmt.Errorf("--sampler perf samples a live process (--pid, --name or -- COMMAND); a trace file holds the runtime's own samples")
		}
		return "eventpipe", nil
	}
	if sampler == "eventpipe" {
		if opts.OffCPU {
			return "", fmt.Errorf("--off-cpu needs the perf sampler (--sampler perf or auto); the EventPipe sampler is a wall clock of managed threads already")
		}
		return sampler, nil
	}
	if opts.Hz <= 0 || opts.Hz > 10000 {
		return "", fmt.Errorf("--hz %d: give 1 to 10000 samples per second", opts.Hz)
	}
	// A program clrspy starts runs as clrspy's user: ask about clrspy itself.
	pid := os.Getpid()
	switch {
	case tgt.pid != 0:
		pid = tgt.pid
	case tgt.name != "":
		p, err := ipc.FindByName(tgt.name)
		if err != nil {
			return "", err
		}
		pid = p
	}
	switch use, why, err := capture.UsePerf(sampler, pid, opts); {
	case err != nil:
		return "", err
	case use:
		return "perf", nil
	case why != nil:
		notice(fmt.Sprintf("perf sampler unavailable: %v; using the EventPipe sampler", why))
	}
	return "eventpipe", nil
}

// profilePerf profiles a live target with the perf_event sampler while an
// EventPipe session names managed code and marks GC stops.
func profilePerf(cmd *cobra.Command, tgt *targetFlags, args []string, po *perfFlags, o *profileOutput) error {
	st, stopWatch, err := tgt.open(cmd, args, perf.SessionProviders)
	if err != nil {
		return err
	}
	// A launched program runs from the moment the runtime was resumed:
	// threads made before the sampler opened are found in /proc, and only
	// the first milliseconds' samples are missed.
	syms := stacks.NewSymbols(st.Header())
	ps, err := capture.StartPerf(st, syms, po.options(), po.perfMap, notice)
	if err != nil {
		st.Stop()
		st.Close()
		return err
	}
	in, err := run(st, stopWatch, syms, ps.Analyzer())
	p, runErr := ps.Stop()
	if err != nil {
		st.Close()
		return err
	}
	if runErr != nil {
		warn("perf sampler: %v", runErr)
	}
	return writeProfile(cmd, st, in, p, o)
}
