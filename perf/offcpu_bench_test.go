package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// BenchmarkOffCPUOverhead measures what `--off-cpu` costs a workload that
// switches context often: mode pingpong (one pair of threads handing a
// token back and forth through AutoResetEvents, spin iterations of
// arithmetic between handoffs; the handoffs are the throughput). Same
// on/off method as BenchmarkSamplerOverhead (one process per iteration,
// 40 slices of 250 ms with the sampler enabled and disabled in turn), the
// sampler at 99 Hz with off-CPU events, no EventPipe session. Beside the
// ratio: the workload's context switches per second (voluntary and not,
// all its threads, /proc/PID/task/*/status, over the 10 s), the
// switch-outs clrspy read per second while on, and clrspy's own CPU per
// second while switching (getrusage: reading, unwinding every
// switch-out, pairing). The control, cpu-only, is the same run without
// off-CPU events (the CPU sampler alone, 99 Hz).
//
//	go test ./perf -run '^$' -bench OffCPUOverhead -benchtime 5x
func BenchmarkOffCPUOverhead(b *testing.B) {
	b.Run("off-cpu", func(b *testing.B) { offCPUOverhead(b, true) })
	b.Run("cpu-only", func(b *testing.B) { offCPUOverhead(b, false) })
}

func offCPUOverhead(b *testing.B, off bool) {
	spin := 300000
	if v, err := strconv.Atoi(os.Getenv("CLRSPY_PINGPONG_SPIN")); err == nil {
		spin = v
	}
	var ratios, switches, reads, cpuPerSec []float64
	for i := 0; i < b.N; i++ {
		p := workload.Start(b, nil, "pingpong", "phases=1", fmt.Sprintf("spin=%d", spin))
		time.Sleep(time.Second)
		s, err := Start(p.Pid, ProfileOptions{Options: Options{Hz: 99, OffCPU: off}, NoSession: true})
		if err != nil {
			b.Fatal(err)
		}
		if off && !s.sampler.Access().OffCPU {
			b.Fatal(s.sampler.Access().OffCPUNote)
		}
		cs0, t0, ru0 := ctxSwitches(p.Pid), time.Now(), rusage()
		var onSwitches uint64
		last := s.Stats().Switches
		p.Release()
		for k := 1; k <= nSlices; k++ {
			time.Sleep(slice)
			if n := s.Stats().Switches; k%2 == 1 {
				onSwitches += n - last
				last = n
			} else {
				last = n
			}
			s.sampler.SetEnabled(k%2 == 0)
			p.Release()
		}
		cs1, t1, ru1 := ctxSwitches(p.Pid), time.Now(), rusage()
		prof, err := s.Stop()
		if err != nil {
			b.Fatal(err)
		}
		p.Stdin("end\n")
		res, err := p.Wait(60 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		var m [][2]float64
		if err := res.Get("marks", &m); err != nil || len(m) != nSlices+2 {
			b.Fatalf("%d marks: %v", len(m), err)
		}
		secs := t1.Sub(t0).Seconds()
		ratios = append(ratios, onOffRatio(m))
		switches = append(switches, float64(cs1-cs0)/secs)
		reads = append(reads, float64(onSwitches)/(secs/2))
		cpuPerSec = append(cpuPerSec, (ru1-ru0)/secs)
		b.Logf("run %d: ratio %.3f; workload %.0f context switches/s, %.0f handoffs/s; %.0f switch-outs read per s while on (%d lost, notes %q); clrspy %.1f ms CPU per s; load %.1f",
			i, ratios[i], switches[i], res.Float("handoffsPerSecond"), reads[i], prof.Lost, prof.Notes, cpuPerSec[i], loadAvg())
	}
	b.ReportMetric(median(ratios), "ratio")
	b.ReportMetric(minOf(ratios), "worst")
	b.ReportMetric(median(switches), "switches/s")
	b.ReportMetric(median(reads), "read/s")
	b.ReportMetric(median(cpuPerSec), "cpu-ms/s")
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
