package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/spf13/cobra"

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
	if _, err := perf.Check(pid, opts); err != nil {
		if sampler == "perf" || opts.OffCPU {
			return "", err
		}
		notice(fmt.Sprintf("perf sampler unavailable: %v; using the EventPipe sampler", err))
		return "eventpipe", nil
	}
	return "perf", nil
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
	sampler, err := perf.Open(st.Pid, po.options())
	if err != nil {
		st.Stop()
		st.Close()
		return err
	}
	if po.perfMap {
		if c, err := ipc.Dial(st.Pid); err == nil {
			if err := c.EnablePerfMap(ipc.PerfMapPerfMap); err == nil {
				defer c.DisablePerfMap()
			} else {
				notice(fmt.Sprintf("--perf-map: %v", err))
			}
		}
	}
	// Without off-CPU events the profile's notes (printed with the
	// summary, kept in the file) say why: sampler.OffCPUNotes below.
	syms := stacks.NewSymbols(st.Header())
	b, err := perf.NewBuilder(st.Pid, st.Header(), syms, perf.BuilderOptions{Hz: po.hz, Cycles: po.event == "cycles", OffCPU: sampler.Access().OffCPU})
	if err != nil {
		sampler.Close()
		st.Stop()
		st.Close()
		return err
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr = sampler.Run(ctx, b.Sample)
	}()
	in, err := run(st, stopWatch, syms, b)
	cancel()
	wg.Wait()
	stats := sampler.Stats()
	sampler.Close()
	if err != nil {
		st.Close()
		return err
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		warn("perf sampler: %v", runErr)
	}
	b.Finish()
	p := b.Result()
	if p.Lost == 0 {
		p.Lost = int64(stats.Lost)
	}
	p.Notes = append(p.Notes, sampler.OffCPUNotes()...)
	return writeProfile(cmd, st, in, p, o)
}
