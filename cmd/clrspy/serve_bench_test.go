package main

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
)

// procCPU is a process's user+system CPU time and its resident set (now
// and peak, MB) from /proc.
func procCPU(pid int) (cpu time.Duration, rssMB, hwmMB float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err == nil {
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 13 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			cpu = time.Duration(u+k) * time.Second / 100
		}
	}
	st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, l := range strings.Split(string(st), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 {
			v, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "VmRSS:":
				rssMB = v / 1024
			case "VmHWM:":
				hwmMB = v / 1024
			}
		}
	}
	return
}

func load1() float64 {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// BenchmarkServeCost measures clrspy serve's own CPU and memory while it
// monitors 1, 10 and 50 processes, idle (a little allocation, a GC every
// few seconds) or GC-busy (10 induced GCs a second each, plus what their
// allocation triggers), with a scrape of /metrics every 5 s: the share of
// one core serve used over SERVE_BENCH_WINDOW (default 30 s), its RSS at
// the end and its peak RSS. scripts/serve-bench.sh runs it.
//
//	go test ./cmd/clrspy -run '^$' -bench ServeCost -benchtime 1x -timeout 60m
func BenchmarkServeCost(b *testing.B) {
	window := 30 * time.Second
	if v := os.Getenv("SERVE_BENCH_WINDOW"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			window = d
		}
	}
	for _, n := range []int{1, 10, 50} {
		for _, busy := range []bool{false, true} {
			kind := "idle"
			args := []string{"idle", "seconds=3600", "allocKB=64", "stdin=1"}
			if busy {
				kind = "busy"
				args = append(args, "gcEveryMs=100")
			}
			b.Run(fmt.Sprintf("%s/%d", kind, n), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					serveCost(b, n, args, window)
				}
			})
		}
	}
}

func serveCost(b *testing.B, n int, args []string, window time.Duration) {
	dir := b.TempDir()
	path, name := aliasWorkload(b, dir, "SvB")
	s := startServe(b, "--name", name, "--level", "warn")
	procs := make([]*workload.Proc, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range procs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			procs[i] = workload.StartCmd(b, exec.Command(path, args...), nil)
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(120 * time.Second)
	for {
		running := 0
		for _, tg := range s.targets(b) {
			if tg.State == "running" {
				running++
			}
		}
		if running == n {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d processes monitored after 120 s", running, n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(5 * time.Second) // past the sessions' start
	load0 := load1()
	cpu0, _, _ := procCPU(s.cmd.Process.Pid)
	start := time.Now()
	for time.Since(start) < window {
		time.Sleep(5 * time.Second)
		httpGet(b, "http://"+s.addr+"/metrics")
	}
	cpu1, rss, hwm := procCPU(s.cmd.Process.Pid)
	elapsed := time.Since(start)
	b.ReportMetric(100*cpu1.Seconds()/elapsed.Seconds()-100*cpu0.Seconds()/elapsed.Seconds(), "%core")
	b.ReportMetric(rss, "RSS_MB")
	b.ReportMetric(hwm, "peakRSS_MB")
	b.ReportMetric((load0+load1())/2, "load")
	for _, p := range procs {
		p.Release()
	}
	for _, p := range procs {
		p.Wait(60 * time.Second)
	}
	s.cmd.Process.Kill()
	<-s.done
}
