package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// BenchmarkOffCPUOverhead measures what `--off-cpu` costs a workload that
// switches context often: mode pingpong (one pair of threads handing a
// token back and forth through AutoResetEvents, spin iterations of
// arithmetic between handoffs; the handoffs are the throughput). Three
// samplers are attached to one workload process at once, all at 99 Hz
// without EventPipe session, and enabled one at a time in cycles of six
// slices of 125 ms: off, every-stack, off, lean, off, cpu-only.
//
//   - every-stack: off-CPU events with the kernel's callchains and 4 KiB
//     of stack at every switch-out (clrspy before the lean events,
//     Options.everyStack);
//   - lean: off-CPU events as clrspy takes them now (offcpu.go: the
//     callchains only while a thread blocks at places whose walk is not
//     known);
//   - cpu-only: the CPU sampler alone (the control).
//
// A configuration's ratio in one cycle is its slice's throughput over
// the mean of the two off slices around it; the metrics are the median
// and the range over every cycle of every process (b.N processes of
// cycles cycles, default 24, CLRSPY_OFFCPU_CYCLES), beside the
// workload's context switches per second in that configuration's slices
// (voluntary and not, all threads, /proc/PID/task/*/status), the
// switch-outs read per second and the share of them read without
// callchains.
//
//	go test ./perf -run '^$' -bench OffCPUOverhead -benchtime 3x
func BenchmarkOffCPUOverhead(b *testing.B) {
	spin := 300000
	if v, err := strconv.Atoi(os.Getenv("CLRSPY_PINGPONG_SPIN")); err == nil {
		spin = v
	}
	cycles := 24
	if v, err := strconv.Atoi(os.Getenv("CLRSPY_OFFCPU_CYCLES")); err == nil && v > 0 {
		cycles = v
	}
	const offSlice = 125 * time.Millisecond
	type config struct {
		name string
		opts Options
	}
	all := []config{
		{"every-stack", Options{Hz: 99, OffCPU: true, everyStack: true}},
		{"lean", Options{Hz: 99, OffCPU: true}},
		{"cpu-only", Options{Hz: 99}},
		// lean-every: the lean events sampling every switch-out (clrspy
		// before busy threads' were sampled one in offSampleEvery).
		{"lean-every", Options{Hz: 99, OffCPU: true, sampleEvery: 1}},
		// Parts of a switch-out's cost (CLRSPY_OFFCPU_CONFIGS): its
		// sample without stack copy, without one or both callchains,
		// or no sample (the switch records alone).
		{"no-copy", Options{Hz: 99, OffCPU: true, offParts: offNoCopy}},
		{"no-kernel-chain", Options{Hz: 99, OffCPU: true, offParts: offNoKernelChain}},
		{"no-user-chain", Options{Hz: 99, OffCPU: true, offParts: offNoUserChain}},
		{"no-chains", Options{Hz: 99, OffCPU: true, offParts: offNoKernelChain | offNoUserChain}},
		{"records-only", Options{Hz: 99, OffCPU: true, offParts: offRecordsOnly}},
		{"copy-no-chains", Options{Hz: 99, OffCPU: true, everyStack: true, offParts: offNoKernelChain | offNoUserChain}},
	}
	configs := all[:3]
	if v := os.Getenv("CLRSPY_OFFCPU_CONFIGS"); v != "" {
		configs = nil
		for _, name := range strings.Split(v, ",") {
			i := slices.IndexFunc(all, func(c config) bool { return c.name == name })
			if i < 0 {
				b.Fatalf("unknown configuration %q", name)
			}
			configs = append(configs, all[i])
		}
	}
	lean := slices.IndexFunc(configs, func(c config) bool { return c.name == "lean" })
	nc := len(configs)
	ratios := make([][]float64, nc)
	csRate := make([][]float64, nc)
	reads := make([][]float64, nc)
	var leanShare []float64
	for i := 0; i < b.N; i++ {
		p := workload.Start(b, nil, "pingpong", "phases=1", fmt.Sprintf("spin=%d", spin))
		time.Sleep(time.Second)
		sess := make([]*Session, nc)
		for c, cf := range configs {
			s, err := Start(p.Pid, ProfileOptions{Options: cf.opts, NoSession: true})
			if err != nil {
				b.Fatal(err)
			}
			if cf.opts.OffCPU && !s.sampler.Access().OffCPU {
				b.Fatal(s.sampler.Access().OffCPUNote)
			}
			s.sampler.SetEnabled(false)
			sess[c] = s
		}
		time.Sleep(offSlice)
		n := cycles * 2 * nc
		cs := make([]int64, n+1)
		sw := make([]uint64, n+1)
		cs[0] = ctxSwitches(p.Pid)
		var lean0 uint64
		if lean >= 0 {
			lean0 = sess[lean].Stats().Lean
		}
		p.Release() // mark 0: slice 0 (off)
		for k := 1; k <= n; k++ {
			time.Sleep(offSlice)
			// Slice k-1 ends; slice k is configuration (k/2)%nc if k is odd.
			cs[k] = ctxSwitches(p.Pid)
			if k%2 == 0 {
				c := (k/2 - 1) % nc
				sw[k] = sess[c].Stats().Switches
				sess[c].sampler.SetEnabled(false)
			} else {
				c := (k / 2) % nc
				sw[k] = sess[c].Stats().Switches
				sess[c].sampler.SetEnabled(true)
			}
			p.Release()
		}
		var leanSw Stats
		if lean >= 0 {
			leanSw = sess[lean].Stats()
		}
		for _, s := range sess {
			if _, err := s.Stop(); err != nil {
				b.Fatal(err)
			}
		}
		p.Stdin("end\n")
		res, err := p.Wait(60 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		var m [][2]float64
		if err := res.Get("marks", &m); err != nil || len(m) < n+1 {
			b.Fatalf("%d marks, want %d: %v", len(m), n+1, err)
		}
		rate := func(k int) float64 { return (m[k+1][1] - m[k][1]) / (m[k+1][0] - m[k][0]) }
		secs := func(k int) float64 { return (m[k+1][0] - m[k][0]) / 1000 }
		for k := 1; k+1 < n; k += 2 {
			c := (k / 2) % nc
			ratios[c] = append(ratios[c], rate(k)/((rate(k-1)+rate(k+1))/2))
			csRate[c] = append(csRate[c], float64(cs[k+1]-cs[k])/secs(k))
			reads[c] = append(reads[c], float64(sw[k+1]-sw[k])/secs(k))
		}
		if leanSw.Switches > 0 {
			leanShare = append(leanShare, float64(leanSw.Lean-lean0)/float64(leanSw.Switches))
		}
		b.Logf("process %d: %d cycles; lean: %d switch-outs, %d without callchains, full events switched on %d times; load %.1f", i, cycles, leanSw.Switches, leanSw.Lean, leanSw.FullOn, loadAvg())
	}
	for c, cf := range configs {
		r := append([]float64(nil), ratios[c]...)
		sort.Float64s(r)
		b.Logf("%s: ratio median %.3f, quartiles %.3f–%.3f, range %.3f–%.3f (%d cycles); workload %.0f context switches/s, %.0f switch-outs read/s (medians)",
			cf.name, median(r), r[len(r)/4], r[len(r)*3/4], r[0], r[len(r)-1], len(r), median(csRate[c]), median(reads[c]))
		if ctl := slices.IndexFunc(configs, func(c config) bool { return c.name == "cpu-only" }); ctl >= 0 && ctl != c {
			// Over the CPU sampler alone in the same cycle: what the
			// off-CPU events add.
			var rel []float64
			for k := 0; k < min(len(ratios[c]), len(ratios[ctl])); k++ {
				rel = append(rel, ratios[c][k]/ratios[ctl][k])
			}
			sort.Float64s(rel)
			b.Logf("%s over cpu-only in the same cycle: median %.3f, quartiles %.3f–%.3f (%d cycles)", cf.name, median(rel), rel[len(rel)/4], rel[len(rel)*3/4], len(rel))
			b.ReportMetric(median(rel), cf.name+"-over-cpu-only")
		}
		b.ReportMetric(median(r), cf.name+"-ratio")
		b.ReportMetric(median(csRate[c]), cf.name+"-switches/s")
	}
	b.ReportMetric(median(leanShare), "lean-share")
	b.ReportMetric(loadAvg(), "load")
}

// ctxSwitches sums the context switches of pid's threads.
func ctxSwitches(pid int) int64 {
	files, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	var n int64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasSuffix(strings.SplitN(line, ":", 2)[0], "ctxt_switches") {
				v, _ := strconv.ParseInt(strings.TrimSpace(strings.SplitN(line, ":", 2)[1]), 10, 64)
				n += v
			}
		}
	}
	return n
}
