package serve

import (
	"context"
	"io"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"
)

// BenchmarkCPUProfileOverhead measures what --cpu-profile adds: the same
// phases as BenchmarkTargetOverhead on the throughput workload (4 busy
// threads: every thread sampled), monitored by a daemon with
// Config.CPUProfile at SERVE_CPU_HZ (19 by default) and, in the same
// run's other half, by one without it. A window (30 s) outlasts a phase:
// the perf session's start and rundown stay outside the phases.
//
//	go test ./serve -run '^$' -bench CPUProfileOverhead -benchtime 1x
func BenchmarkCPUProfileOverhead(b *testing.B) {
	pairs := 7
	if v, err := strconv.Atoi(os.Getenv("SERVE_OVERHEAD_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	phase := 3 * time.Second
	if v, err := time.ParseDuration(os.Getenv("SERVE_OVERHEAD_PHASE")); err == nil && v > 0 {
		phase = v
	}
	hz := 19
	if v, err := strconv.Atoi(os.Getenv("SERVE_CPU_HZ")); err == nil && v > 0 {
		hz = v
	}
	for _, c := range []struct {
		name string
		cpu  CPUProfile
	}{{"serve+cpu", CPUProfile{On: true, Hz: hz, Window: 30 * time.Second}}, {"serve", CPUProfile{}}} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				rs := overheadRunCfg(b, []string{"throughput", "phases=1", "threads=4"}, pairs, phase, &Config{CPUProfile: c.cpu})
				sort.Float64s(rs)
				b.ReportMetric(rs[len(rs)/2], "median")
				b.ReportMetric(rs[0], "lowest")
				b.ReportMetric(rs[len(rs)-1], "highest")
				b.ReportMetric(load1(), "load")
			}
		})
	}
}

// BenchmarkTargetOverhead measures what monitoring costs the monitored
// program: one workload process runs in phases marked on its stdin,
// alternating unmonitored and monitored (a daemon watching it: the
// session opened before the phase starts, stopped after it ends, so
// attaching and the rundown stay outside), SERVE_OVERHEAD_PAIRS pairs (7
// by default) of SERVE_OVERHEAD_PHASE (3 s). Each monitored phase's
// throughput is divided by the mean of the unmonitored phases around it;
// the median, lowest and highest ratio are reported (1 is free). The
// "none" runs do the same with nothing attached: the method's own noise on
// this machine. scripts/serve-bench.sh runs it.
//
//	go test ./serve -run '^$' -bench TargetOverhead -benchtime 1x
func BenchmarkTargetOverhead(b *testing.B) {
	pairs := 7
	if v, err := strconv.Atoi(os.Getenv("SERVE_OVERHEAD_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	phase := 3 * time.Second
	if v, err := time.ParseDuration(os.Getenv("SERVE_OVERHEAD_PHASE")); err == nil && v > 0 {
		phase = v
	}
	for _, mode := range []struct {
		name string
		args []string
	}{
		// One thread allocating flat out: about 30 GCs a second, each
		// one sending events, the worst case for a GC session.
		{"churn", []string{"churn", "phases=1"}},
		// CPU-bound work that hardly allocates (managed code, P/Invoke,
		// callbacks), on one thread.
		{"throughput", []string{"throughput", "phases=1", "threads=1"}},
	} {
		for _, monitored := range []bool{true, false} {
			name := mode.name + "/serve"
			if !monitored {
				name = mode.name + "/none"
			}
			b.Run(name, func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					rs := overheadRun(b, mode.args, pairs, phase, monitored)
					sort.Float64s(rs)
					b.ReportMetric(rs[len(rs)/2], "median")
					b.ReportMetric(rs[0], "lowest")
					b.ReportMetric(rs[len(rs)-1], "highest")
					b.ReportMetric(load1(), "load")
				}
			})
		}
	}
}

func load1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	var v float64
	for i, c := range string(b) {
		if c == ' ' {
			v, _ = strconv.ParseFloat(string(b[:i]), 64)
			break
		}
	}
	return v
}

// overheadRun runs one workload through pairs of phases and returns each
// pair's ratio.
func overheadRun(b *testing.B, args []string, pairs int, phase time.Duration, monitored bool) []float64 {
	var cfg *Config
	if monitored {
		cfg = &Config{}
	}
	return overheadRunCfg(b, args, pairs, phase, cfg)
}

// overheadRunCfg is overheadRun with the monitoring daemon's
// configuration (nil: unmonitored).
func overheadRunCfg(b *testing.B, args []string, pairs int, phase time.Duration, base *Config) []float64 {
	monitored := base != nil
	path, _ := alias(b, b.TempDir())
	p := startAs(b, path, nil, args...)
	mark := func() { p.Stdin("m\n") }
	for i := 0; i < pairs; i++ {
		mark()
		time.Sleep(phase)
		mark()
		var stop func()
		if monitored {
			cfg := *base
			cfg.Pids, cfg.LogOutput = []int{p.Pid}, io.Discard
			d, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { d.Run(ctx); close(done) }()
			deadline := time.Now().Add(60 * time.Second)
			for {
				if ti, _ := info(d, strconv.Itoa(p.Pid)); ti.State == "running" {
					break
				}
				if time.Now().After(deadline) {
					b.Fatal("not monitored after 60 s")
				}
				time.Sleep(20 * time.Millisecond)
			}
			stop = func() { cancel(); <-done }
		}
		mark()
		time.Sleep(phase)
		mark()
		if stop != nil {
			stop()
		}
	}
	mark()
	time.Sleep(phase)
	p.Stdin("end\n")
	res, err := p.Wait(120 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	var m [][2]float64
	if err := res.Get("marks", &m); err != nil || len(m) != 4*pairs+2 {
		b.Fatalf("%d marks (%v), want %d", len(m), err, 4*pairs+2)
	}
	rate := func(i int) float64 { return (m[i+1][1] - m[i][1]) / (m[i+1][0] - m[i][0]) }
	var rs []float64
	for i := 0; i < pairs; i++ {
		u0, mon, u1 := rate(4*i), rate(4*i+2), rate(4*i+4)
		rs = append(rs, mon/((u0+u1)/2))
	}
	return rs
}
