package ipc

import (
	"io"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/nettrace"
)

// sessionRun runs the churn workload for secs seconds, attached with
// providers (none: not attached), the session drained through the nettrace
// reader as an analysis would. It returns the workload's throughput and
// the session's event, lost-event and byte counts.
func sessionRun(b *testing.B, mode string, work string, providers []Provider) (perSec, elapsed float64, events, lost, bytes uint64) {
	p := workload.Start(b, nil, mode, work, "wait=1")
	var s *Session
	done := make(chan struct{})
	if providers != nil {
		c, err := Dial(p.Pid)
		if err != nil {
			b.Fatal(err)
		}
		s, err = c.StartSession(SessionConfig{Providers: providers})
		if err != nil {
			b.Fatal(err)
		}
		go func() {
			defer close(done)
			r, err := nettrace.NewReader(s)
			if err != nil {
				return
			}
			for {
				if _, err := r.Next(); err != nil {
					if err != io.EOF {
						b.Error(err)
					}
					break
				}
				events++
			}
			lost = r.Stats().LostEvents
		}()
	} else {
		close(done)
	}
	p.Release()
	res, err := p.Wait(120 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	<-done
	if s != nil {
		bytes = uint64(s.BytesRead())
		s.Close()
	}
	switch mode {
	case "cpu":
		perSec = res.Float("rounds") / (res.ElapsedMs / 1000)
	default:
		perSec = res.Float("iterationsPerSecond")
	}
	return perSec, res.ElapsedMs / 1000, events, lost, bytes
}

// phasedRatio runs mode with phases=1 and measures, in one process, its
// throughput unattached (2 s), attached with providers (2 s, from the
// session's start to the end of its stream, rundown included) and
// unattached again (2 s), after a 1 s warm-up. It returns attached
// throughput over the mean of the unattached phases (1 = no cost).
func phasedRatio(b *testing.B, mode string, cfg SessionConfig, raw bool, args ...string) float64 {
	p := workload.Start(b, nil, mode, append([]string{"phases=1"}, args...)...)
	phase := 2 * time.Second
	time.Sleep(time.Second)
	p.Release() // mark 0
	time.Sleep(phase)
	p.Release() // mark 1
	if cfg.Providers == nil {
		// The control: no session, the same phases.
		time.Sleep(phase)
		p.Release()
		time.Sleep(phase)
		p.Stdin("end\n")
		return phaseRatio(b, p)
	}
	c, err := Dial(p.Pid)
	if err != nil {
		b.Fatal(err)
	}
	s, err := c.StartSession(cfg)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if raw {
			io.Copy(io.Discard, s)
			return
		}
		r, err := nettrace.NewReader(s)
		if err != nil {
			return
		}
		for {
			if _, err := r.Next(); err != nil {
				break
			}
		}
	}()
	time.Sleep(phase)
	s.Stop()
	<-done
	s.Close()
	p.Release() // mark 2
	time.Sleep(phase)
	p.Stdin("end\n") // mark 3
	return phaseRatio(b, p)
}

// phaseRatio is the second phase's throughput over the mean of the first
// and third, from the workload's marks.
func phaseRatio(b *testing.B, p *workload.Proc) float64 {
	res, err := p.Wait(60 * time.Second)
	if err != nil {
		b.Fatal(err)
	}
	var m [][2]float64
	if err := res.Get("marks", &m); err != nil || len(m) != 4 {
		b.Fatalf("marks %v: %v", m, err)
	}
	rate := func(i int) float64 { return (m[i+1][1] - m[i][1]) / (m[i+1][0] - m[i][0]) }
	lastBaseRate = (rate(0) + rate(2)) / 2 * 1000
	return rate(1) / ((rate(0) + rate(2)) / 2)
}

// lastBaseRate is the unattached units per second of the latest
// phaseRatio (BenchmarkExceptionsOverhead turns the ratio into a cost per
// exception with it).
var lastBaseRate float64

// BenchmarkOverhead measures what a session costs the traced program: the
// workload's throughput while attached with the gc or the cpu profile,
// relative to the same process's throughput just before and after
// (phasedRatio): the median, lowest and highest ratio over b.N runs. The
// none case runs the same phases without a session: the method's own
// noise.
//
//	go test ./ipc -run '^$' -bench Overhead -benchtime 5x
func BenchmarkOverhead(b *testing.B) {
	gc, _ := Profile("gc")
	cpu, _ := Profile("cpu")
	for _, tc := range []struct {
		name, mode string
		cfg        SessionConfig
		raw        bool // drain the stream without parsing it
	}{
		{"none/churn", "churn", SessionConfig{}, false},
		{"gc/churn", "churn", SessionConfig{Providers: gc}, false},
		{"gc-raw/churn", "churn", SessionConfig{Providers: gc}, true},
		{"gc-norundown/churn", "churn", SessionConfig{Providers: gc, NoRundown: true}, false},
		{"cpu/churn", "churn", SessionConfig{Providers: cpu}, false},
		{"cpu/cpu", "cpu", SessionConfig{Providers: cpu}, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rs := make([]float64, b.N)
			for i := range rs {
				rs[i] = phasedRatio(b, tc.mode, tc.cfg, tc.raw)
			}
			sort.Float64s(rs)
			b.ReportMetric(rs[len(rs)/2], "median")
			b.ReportMetric(rs[0], "worst")
			b.ReportMetric(rs[len(rs)-1], "best")
		})
	}
}

// BenchmarkExceptionsOverhead is BenchmarkOverhead for clrspy exceptions'
// session (the Exception keyword, every throw with its stack, and the
// method events that name them) on the throws workload paced at 10,000
// exceptions a second, the rest of each millisecond in counted CPU work:
// the ratio is the work left to the program while traced. The none case
// is the method's noise.
//
//	go test ./ipc -run '^$' -bench ExceptionsOverhead -benchtime 5x
func BenchmarkExceptionsOverhead(b *testing.B) {
	exc := []Provider{{Name: nettrace.ProviderRuntime, Keywords: KeywordException | KeywordSymbols, Level: LevelInformational}}
	for _, tc := range []struct {
		name string
		cfg  SessionConfig
		rate string
	}{
		{"none/throws-10k", SessionConfig{}, "rate=10000"},
		{"exceptions/throws-10k", SessionConfig{Providers: exc}, "rate=10000"},
		// Unpaced: exceptions back to back, the units are exceptions, so
		// the ratio gives the cost of one (us/exception: traced minus
		// untraced).
		{"none/throws-max", SessionConfig{}, "rate=-1"},
		{"exceptions/throws-max", SessionConfig{Providers: exc}, "rate=-1"},
		// The same events without their stacks: what the stack walks cost.
		{"exceptions-nostacks/throws-max", SessionConfig{Providers: exc, NoStackwalk: true}, "rate=-1"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			rs := make([]float64, b.N)
			costs := make([]float64, b.N)
			for i := range rs {
				rs[i] = phasedRatio(b, "throws", tc.cfg, false, tc.rate)
				costs[i] = (1/rs[i] - 1) / lastBaseRate * 1e6
			}
			sort.Float64s(rs)
			sort.Float64s(costs)
			b.ReportMetric(rs[len(rs)/2], "median")
			b.ReportMetric(rs[0], "worst")
			b.ReportMetric(rs[len(rs)-1], "best")
			if strings.HasSuffix(tc.name, "-max") {
				b.ReportMetric(costs[len(costs)/2], "us/exception")
				b.ReportMetric(lastBaseRate, "untraced/s")
			}
		})
	}
}

// BenchmarkThroughput runs the heaviest profile (gc-verbose, alloc and
// movement) on the churn workload at the default buffer size and reports
// the events per second the session sustained and the events lost.
//
//	go test ./ipc -run '^$' -bench Throughput -benchtime 2x
func BenchmarkThroughput(b *testing.B) {
	var prov [][]Provider
	for _, n := range []string{"gc-verbose", "alloc", "movement"} {
		p, _ := Profile(n)
		prov = append(prov, p)
	}
	heavy := Merge(prov...)
	all, _ := Profile("all")
	for _, tc := range []struct {
		name string
		prov []Provider
	}{{"gc-verbose+alloc+movement", heavy}, {"all", all}} {
		b.Run(tc.name, func(b *testing.B) {
			var events, lost, bytes uint64
			var secs float64
			for i := 0; i < b.N; i++ {
				_, el, e, l, by := sessionRun(b, "churn", "seconds=3", tc.prov)
				events += e
				lost += l
				bytes += by
				secs += el
			}
			// Rates over the workload's running time (startup excluded).
			b.ReportMetric(float64(events)/secs, "events/s")
			b.ReportMetric(float64(bytes)/secs/1e6, "MB/s")
			b.ReportMetric(float64(lost), "lost")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
