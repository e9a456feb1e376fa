package procfs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SchedNanos sums, over a process's live threads, the time they ran on a
// CPU and the time they waited runnable on a run queue
// (/proc/PID/task/TID/schedstat, first two fields). Its growth over an
// interval is the CPU the process asked for, which a loaded machine does
// not shrink (the share it got, utime+stime, does shrink). Threads that
// exited are no longer counted.
func SchedNanos(pid int) (int64, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range ents {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		run, err1 := strconv.ParseInt(f[0], 10, 64)
		wait, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 == nil && err2 == nil {
			total += run + wait
		}
	}
	return total, nil
}

// DemandPct is the CPU a process asked for over an interval as a share of
// cores, in percent: the growth of its SchedNanos (n0 then n1) over the
// interval el. -1 when it cannot be said (no interval, no cores).
func DemandPct(n0, n1 int64, el time.Duration, cores int) float64 {
	if el <= 0 || cores <= 0 {
		return -1
	}
	return float64(n1-n0) * 100 / float64(el.Nanoseconds()) / float64(cores)
}

// DemandSampler reads a process's SchedNanos every interval while a
// command runs, so the first and last readings span what it observed even
// when the process exits (taking its threads' times with it) before the
// command ends.
type DemandSampler struct {
	pid  int
	stop chan struct{}
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	n    int
	t0   time.Time
	v0   int64
	t1   time.Time
	v1   int64
}

// StartDemand starts sampling pid every interval.
func StartDemand(pid int, every time.Duration) *DemandSampler {
	s := &DemandSampler{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	s.read()
	go func() {
		defer close(s.done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tk.C:
				s.read()
			}
		}
	}()
	return s
}

func (s *DemandSampler) read() {
	v, err := SchedNanos(s.pid)
	if err != nil {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.t0, s.v0 = now, v
	}
	s.t1, s.v1 = now, max(v, s.v1)
	s.n++
}

// Pct stops the sampler and returns the CPU the process asked for as a
// share of cores (DemandPct; -1 with fewer than two readings a second
// apart).
func (s *DemandSampler) Pct(cores int) float64 {
	s.once.Do(func() {
		s.read()
		close(s.stop)
		<-s.done
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.t1.Sub(s.t0)
	if s.n < 2 || el < time.Second {
		return -1
	}
	return DemandPct(s.v0, s.v1, el, cores)
}
