package perf

import (
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/symtab"
)

// Benchmarks for docs/PERFORMANCE.md (scripts/perf-overhead.sh runs
// them). They start the C# workload and need root (or CAP_PERFMON) like
// the live tests.

// phase is how long each phase of the EventPipe comparison lasts; slice
// how long the perf sampler stays on or off at a time.
const (
	phase   = 2 * time.Second
	slice   = 250 * time.Millisecond
	nSlices = 40
)

// BenchmarkSamplerOverhead measures what each sampler costs a 4-thread
// throughput workload (mode throughput, threads=4, phases=1), inside one
// workload process per iteration:
//
//   - perf: the sampler (99 Hz, its EventPipe session for names and GC
//     events included) is attached for 10 s and switched on and off every
//     250 ms (Sampler.SetEnabled: the events are disabled, nothing else
//     changes). Throughput in the "on" slices over throughput in the
//     "off" slices is the ratio: 40 alternations cancel out the drift of a
//     shared machine's load, which 2-second phases do not.
//   - eventpipe: 2 s unattached, 2 s with what `clrspy profile --pid` runs
//     today (the runtime's sample profiler and method events read into a
//     stacks.Builder, attach and rundown inside the phase), 2 s
//     unattached: its throughput over the mean of the two around it.
//
// 1.00 is free. One iteration is one pair of ratios; the metrics are the
// medians over b.N pairs and the worst ratios, clrspy's own CPU while
// switching, per second and per 1,000 perf samples (getrusage of this
// process: the sampler, unwinding, the EventPipe session's reader and the
// switching itself; attach and naming excluded), its CPU for attaching,
// stopping and naming one session (the first in a process also reads
// /proc/kallsyms), and the load average seen.
//
//	go test ./perf -run '^$' -bench SamplerOverhead -benchtime 5x
func BenchmarkSamplerOverhead(b *testing.B) {
	var perfR, epR, cpuPer1k, cpuPerSec, sessionCPU, loads []float64
	for i := 0; i < b.N; i++ {
		p := workload.Start(b, nil, "throughput", "threads=4", "phases=1")
		time.Sleep(time.Second) // warm-up: tiering settles
		loads = append(loads, loadAvg())
		ru0 := rusage()
		s, err := Start(p.Pid, ProfileOptions{})
		if err != nil {
			b.Fatal(err)
		}
		ru1 := rusage()
		n0 := s.Stats().Samples
		p.Release() // mark 0: slice 0 (on)
		for k := 1; k <= nSlices; k++ {
			time.Sleep(slice)
			s.sampler.SetEnabled(k%2 == 0)
			p.Release() // mark k: slice k
		}
		ru2 := rusage()
		n1 := s.Stats().Samples
		prof, err := s.Stop()
		if err != nil {
			b.Fatal(err)
		}
		ru3 := rusage()
		time.Sleep(phase)
		p.Release() // EventPipe sampler from here
		epSample(b, p.Pid, phase)
		p.Release()
		time.Sleep(phase)
		p.Stdin("end\n")
		res, err := p.Wait(60 * time.Second)
		if err != nil {
			b.Fatal(err)
		}
		var m [][2]float64
		if err := res.Get("marks", &m); err != nil || len(m) != nSlices+1+3 {
			b.Fatalf("%d marks, want %d: %v", len(m), nSlices+4, err)
		}
		perfR = append(perfR, onOffRatio(m))
		rate := func(k int) float64 { return (m[k+1][1] - m[k][1]) / (m[k+1][0] - m[k][0]) }
		e := nSlices // marks e, e+1, e+2, e+3: before, EventPipe, after
		epR = append(epR, rate(e+1)/((rate(e)+rate(e+2))/2))
		if n1 > n0 {
			cpuPer1k = append(cpuPer1k, (ru2-ru1)/float64(n1-n0)*1000)
		}
		cpuPerSec = append(cpuPerSec, (ru2-ru1)/(float64(nSlices)*slice.Seconds()))
		sessionCPU = append(sessionCPU, (ru1-ru0)+(ru3-ru2))
		loads = append(loads, loadAvg())
		b.Logf("pair %d: perf %.3f (%d samples while on, %d lost), eventpipe %.3f; clrspy %.1f ms CPU per s (%.1f per 1k samples), %.0f ms to attach and stop; load %.1f",
			i, perfR[i], n1-n0, prof.Lost, epR[i], cpuPerSec[i], cpuPer1k[len(cpuPer1k)-1], sessionCPU[i], loads[len(loads)-1])
	}
	b.ReportMetric(median(perfR), "perf-ratio")
	b.ReportMetric(minOf(perfR), "perf-worst")
	b.ReportMetric(median(epR), "eventpipe-ratio")
	b.ReportMetric(minOf(epR), "eventpipe-worst")
	b.ReportMetric(median(cpuPer1k), "cpu-ms/1k-samples")
	b.ReportMetric(median(cpuPerSec), "cpu-ms/s")
	b.ReportMetric(median(sessionCPU), "session-cpu-ms")
	b.ReportMetric(median(loads), "load")
}

// BenchmarkPerfOverheadAt measures the perf sampler alone at high rates,
// where its cost on the target is large enough to stand out of a shared
// machine's noise, and derives the cost per sample: the target loses
// (1 - ratio) of its CPU time, rate samples per CPU-second, so one sample
// costs (1 - ratio) / rate seconds of the sampled thread. At 99 Hz the
// overhead is then 99 × that. Same method as BenchmarkSamplerOverhead
// (one 4-thread throughput process per iteration, 40 slices of 250 ms,
// on and off), without the EventPipe session (it does not scale with the
// rate).
//
//	go test ./perf -run '^$' -bench PerfOverheadAt -benchtime 5x
func BenchmarkPerfOverheadAt(b *testing.B) {
	for _, hz := range []int{999, 4999} {
		b.Run(strconv.Itoa(hz)+"Hz", func(b *testing.B) {
			var ratios, costs []float64
			for i := 0; i < b.N; i++ {
				p := workload.Start(b, nil, "throughput", "threads=4", "phases=1")
				time.Sleep(time.Second)
				s, err := Start(p.Pid, ProfileOptions{Options: Options{Hz: hz}, NoSession: true})
				if err != nil {
					b.Fatal(err)
				}
				p.Release()
				for k := 1; k <= nSlices; k++ {
					time.Sleep(slice)
					s.sampler.SetEnabled(k%2 == 0)
					p.Release()
				}
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
				r := onOffRatio(m)
				ratios = append(ratios, r)
				costs = append(costs, (1-r)/float64(hz)*1e6)
				b.Logf("run %d at %d Hz: ratio %.3f (%d samples, %d lost): %.1f µs of the thread per sample; load %.1f", i, hz, r, prof.Total, prof.Lost, costs[i], loadAvg())
			}
			b.ReportMetric(median(ratios), "ratio")
			b.ReportMetric(median(costs), "µs/sample")
			b.ReportMetric(median(costs)*99/1e4, "%-at-99Hz")
		})
	}
}

// onOffRatio is the throughput in the even slices (sampler on) over the
// throughput in the odd ones, from the workload's marks.
func onOffRatio(m [][2]float64) float64 {
	var onU, onMs, offU, offMs float64
	for k := 0; k < nSlices; k++ {
		du, dms := m[k+1][1]-m[k][1], m[k+1][0]-m[k][0]
		if k%2 == 0 {
			onU, onMs = onU+du, onMs+dms
		} else {
			offU, offMs = offU+du, offMs+dms
		}
	}
	return (onU / onMs) / (offU / offMs)
}

// epSample runs the EventPipe sampler on pid for d, as `clrspy profile
// --pid` does.
func epSample(b *testing.B, pid int, d time.Duration) {
	cpu := stacks.SamplerProviders()
	c, err := ipc.Dial(pid)
	if err != nil {
		b.Fatal(err)
	}
	s, err := c.StartSession(ipc.SessionConfig{Providers: cpu})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r, err := nettrace.NewReader(s)
		if err != nil {
			return
		}
		sb := stacks.New(r.Header(), stacks.Options{})
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					b.Error(err)
				}
				break
			}
			sb.Event(ev)
		}
		sb.Result()
	}()
	time.Sleep(d)
	s.Stop()
	<-done
	s.Close()
}

// BenchmarkBuilder measures clrspy's own cost per sample: unwinding
// (Builder.Sample) and naming (Result) of 3,000 samples recorded from the
// mixed workload at 999 Hz, the ELF files already loaded (as they are
// after the first samples of a session). Times are the benchmark
// thread's CPU time, not wall time: the machine is shared.
//
//	go test ./perf -run '^$' -bench Builder -benchtime 20x
func BenchmarkBuilder(b *testing.B) {
	p := workload.Start(b, nil, "mixed", "seconds=120", "wait=1")
	defer p.Cmd.Process.Kill()
	smp, err := Open(p.Pid, Options{Hz: 999})
	if err != nil {
		b.Fatal(err)
	}
	p.Release()
	var recorded []Sample
	ctx, cancel := context.WithCancel(context.Background())
	smp.Run(ctx, func(s *Sample) {
		c := *s
		c.Kernel = append([]uint64(nil), s.Kernel...)
		c.User = append([]uint64(nil), s.User...)
		c.Stack = append([]byte(nil), s.Stack...)
		recorded = append(recorded, c)
		if len(recorded) == 3000 {
			cancel()
		}
	})
	smp.Close()
	proc, err := symtab.NewProcess(p.Pid)
	if err != nil {
		b.Fatal(err)
	}
	warm := newBuilder(p.Pid, proc, nil, nil, BuilderOptions{Hz: 999})
	for i := range recorded {
		warm.Sample(&recorded[i])
	}
	warm.Result()
	// Thread CPU time, not wall time: the machine is shared.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var unwindNs, nameNs int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		bu := newBuilder(p.Pid, proc, nil, nil, BuilderOptions{Hz: 999})
		t0 := threadCPU()
		for k := range recorded {
			bu.Sample(&recorded[k])
		}
		t1 := threadCPU()
		bu.Finish()
		prof := bu.Result()
		unwindNs += t1 - t0
		nameNs += threadCPU() - t1
		if prof.Total != int64(len(recorded)) {
			b.Fatalf("%d samples in the profile, %d recorded", prof.Total, len(recorded))
		}
	}
	n := float64(b.N * len(recorded))
	b.ReportMetric(float64(unwindNs)/n, "unwind-ns/sample")
	b.ReportMetric(float64(nameNs)/n, "name-ns/sample")
	b.ReportMetric(float64(unwindNs+nameNs)/n*1000/1e6, "cpu-ms/1k-samples")
}

// BenchmarkLost samples the throughput workload with 16 busy threads at
// 999 Hz with the default ring buffers for 5 s and reports the samples
// taken and lost.
//
//	go test ./perf -run '^$' -bench Lost -benchtime 3x
func BenchmarkLost(b *testing.B) {
	var lost, taken []float64
	for i := 0; i < b.N; i++ {
		p := workload.Start(b, nil, "throughput", "threads=16", "seconds=6", "wait=1")
		s, err := Start(p.Pid, ProfileOptions{Options: Options{Hz: 999}})
		if err != nil {
			b.Fatal(err)
		}
		p.Release()
		time.Sleep(5 * time.Second)
		prof, err := s.Stop()
		if err != nil {
			b.Fatal(err)
		}
		st := s.Stats()
		p.Wait(60 * time.Second)
		lost = append(lost, float64(prof.Lost))
		taken = append(taken, float64(prof.Total))
		b.Logf("run %d: %d samples, %d lost, ring %d KiB × %d CPUs, load %.1f", i, prof.Total, prof.Lost, st.RingBytes>>10, st.CPUs, loadAvg())
	}
	b.ReportMetric(median(taken), "samples")
	b.ReportMetric(median(lost), "lost")
	sort.Float64s(lost)
	b.ReportMetric(lost[len(lost)-1], "lost-max")
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

// threadCPU is the calling thread's CPU time in nanoseconds.
func threadCPU() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return ts.Nano()
}

// rusage is this process's CPU time so far, in milliseconds.
func rusage() float64 {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// loadAvg is the one-minute load average.
func loadAvg() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// BenchmarkSamplerCPUCost measures the perf sampler's cost on the target
// as the target's CPU time per unit of work, not as wall-clock
// throughput: a shared machine's load changes how much CPU the target
// gets, far less what a unit of work costs it. One throughput process
// (threads=2, phases=1) per iteration; the sampler (99 Hz,
// CLRSPY_CPUCOST_HZ, no EventPipe session) attached and switched on and
// off in slices of 100 ms, CLRSPY_CPUCOST_PAIRS pairs (default 150). Each
// slice's CPU time is that of all the target's threads (taskCPU: the
// process's CPU-time clock, what /proc/PID/task/*/schedstat sums to, to
// the nanosecond); without IRQ time accounting the kernel's sampling work
// (timer interrupt, stack copy, callchain) is charged to the sampled
// thread, so it is in it. An "on" slice's ratio is its CPU per unit over
// the mean of the two "off" slices' around it. The overhead is the median
// ratio minus one with a bootstrap 95 % interval (2,000 resamples of all
// on slices of all processes), beside the mean with ±1.96 standard errors
// (a loaded machine gives heavy tails: the median is the figure) and the
// ratio of the totals (all on CPU per unit over all off).
//
//	go test ./perf -run '^$' -bench SamplerCPUCost -benchtime 3x
func BenchmarkSamplerCPUCost(b *testing.B) {
	pairs, hz := 150, 99
	if v, err := strconv.Atoi(os.Getenv("CLRSPY_CPUCOST_PAIRS")); err == nil && v > 1 {
		pairs = v
	}
	if v, err := strconv.Atoi(os.Getenv("CLRSPY_CPUCOST_HZ")); err == nil && v > 0 {
		hz = v
	}
	const costSlice = 100 * time.Millisecond
	var ratios []float64
	var onCPU, onUnits, offCPU, offUnits, samples, onSecs float64
	for i := 0; i < b.N; i++ {
		p := workload.Start(b, nil, "throughput", "threads=2", "phases=1")
		time.Sleep(time.Second)
		s, err := Start(p.Pid, ProfileOptions{Options: Options{Hz: hz}, NoSession: true})
		if err != nil {
			b.Fatal(err)
		}
		s.sampler.SetEnabled(false)
		time.Sleep(costSlice)
		n := 2 * pairs
		cpu := make([]float64, n+1)
		cpu[0] = taskCPU(p.Pid)
		p.Release() // mark 0: slice 0 (off)
		for k := 1; k <= n; k++ {
			time.Sleep(costSlice)
			cpu[k] = taskCPU(p.Pid)
			s.sampler.SetEnabled(k%2 == 1) // odd slices on
			p.Release()
		}
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
		if err := res.Get("marks", &m); err != nil || len(m) < n+1 {
			b.Fatalf("%d marks, want %d: %v", len(m), n+1, err)
		}
		perUnit := func(k int) float64 { return (cpu[k+1] - cpu[k]) / (m[k+1][1] - m[k][1]) }
		var rs []float64
		for k := 1; k+1 < n; k += 2 {
			if m[k+1][1] > m[k][1] && m[k][1] > m[k-1][1] && m[k+2][1] > m[k+1][1] {
				rs = append(rs, perUnit(k)/((perUnit(k-1)+perUnit(k+1))/2))
			}
			onCPU += cpu[k+1] - cpu[k]
			onUnits += m[k+1][1] - m[k][1]
			offCPU += cpu[k] - cpu[k-1]
			offUnits += m[k][1] - m[k-1][1]
			onSecs += (m[k+1][0] - m[k][0]) / 1000
		}
		ratios = append(ratios, rs...)
		samples += float64(prof.Total)
		mean, ci := meanCI(rs)
		b.Logf("process %d: %d on slices: CPU per unit on/off %.4f ± %.4f (95 %%), median %.4f; %.1f units and %.1f ms of target CPU per slice; %d samples, %d lost; load %.1f",
			i, len(rs), mean, ci, median(rs), (m[n][1]-m[0][1])/float64(n), (cpu[n]-cpu[0])/1e6/float64(n), prof.Total, prof.Lost, loadAvg())
	}
	mean, ci := meanCI(ratios)
	med, lo, hi := medianCI(ratios)
	total := (onCPU / onUnits) / (offCPU / offUnits)
	b.Logf("all: %d on slices: overhead (median) %+.2f %%, 95 %% CI %+.2f … %+.2f %%; mean %+.2f %% ± %.2f; ratio of totals %.4f; %.0f samples/s while on",
		len(ratios), (med-1)*100, (lo-1)*100, (hi-1)*100, (mean-1)*100, ci*100, total, samples/onSecs)
	b.ReportMetric((med-1)*100, "overhead-%")
	b.ReportMetric((lo-1)*100, "ci95-lo-%")
	b.ReportMetric((hi-1)*100, "ci95-hi-%")
	b.ReportMetric(total, "total-ratio")
	b.ReportMetric(samples/onSecs, "samples/s")
	b.ReportMetric(loadAvg(), "load")
}

// medianCI is the median of v and a bootstrap 95 % interval of it (2,000
// resamples, a fixed seed).
func medianCI(v []float64) (med, lo, hi float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	r := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, 2000)
	s := make([]float64, len(v))
	for i := range meds {
		for k := range s {
			s[k] = v[r.IntN(len(v))]
		}
		meds[i] = median(s)
	}
	sort.Float64s(meds)
	return median(v), meds[len(meds)*25/1000], meds[len(meds)*975/1000]
}

// meanCI is the mean of v and the half-width of its 95 % confidence
// interval (1.96 standard errors).
func meanCI(v []float64) (float64, float64) {
	if len(v) < 2 {
		return 0, 0
	}
	var sum, sq float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	for _, x := range v {
		sq += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(sq / float64(len(v)-1))
	return mean, 1.96 * sd / math.Sqrt(float64(len(v)))
}

// taskCPU is the CPU time of pid's threads so far, in nanoseconds: the
// process's CPU-time clock (clock_getcpuclockid's, CPUCLOCK_SCHED: the
// scheduler's run time of every thread, the running ones' up to now), or
// the sum of /proc/PID/task/*/schedstat's run times (updated at ticks
// and switches) where that clock cannot be read.
func taskCPU(pid int) float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(^pid<<3|2), &ts); err == nil {
		return float64(ts.Nano())
	}
	files, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
	var ns float64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if fs := strings.Fields(string(b)); len(fs) > 0 {
			v, _ := strconv.ParseFloat(fs[0], 64)
			ns += v
		}
	}
	return ns
}
