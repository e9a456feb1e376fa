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
	ts, err := SchedThreads(pid)
	var total int64
	for _, v := range ts {
		total += v
	}
	return total, err
}

// SchedThreads is SchedNanos per live thread (by thread id).
func SchedThreads(pid int) (map[uint64]int64, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]int64, len(ents))
	for _, e := range ents {
		tid, err := strconv.ParseUint(e.Name(), 10, 64)
		if err != nil {
			continue
		}
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
			out[tid] = run + wait
		}
	}
	return out, nil
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
	// threads: keep each thread's time too (StartThreadDemand); th0, th1
	// are each thread's time at the first and the latest reading (a
	// thread born later starts from 0).
	threads  bool
	th0, th1 map[uint64]int64
}

// StartDemand starts sampling pid every interval.
func StartDemand(pid int, every time.Duration) *DemandSampler {
	return startDemand(pid, every, false)
}

// StartThreadDemand is StartDemand keeping each thread's time as well, for
// Busiest (it reads every thread's schedstat at each interval).
func StartThreadDemand(pid int, every time.Duration) *DemandSampler {
	return startDemand(pid, every, true)
}

func startDemand(pid int, every time.Duration, threads bool) *DemandSampler {
	s := &DemandSampler{pid: pid, threads: threads, stop: make(chan struct{}), done: make(chan struct{})}
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
	var v int64
	var ts map[uint64]int64
	if s.threads {
		var err error
		if ts, err = SchedThreads(s.pid); err != nil || len(ts) == 0 {
			return
		}
		for _, x := range ts {
			v += x
		}
	} else {
		var err error
		if v, err = SchedNanos(s.pid); err != nil {
			return
		}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n == 0 {
		s.t0, s.v0, s.th0 = now, v, ts
	}
	if ts != nil {
		if s.th1 == nil {
			s.th1 = map[uint64]int64{}
		}
		for tid, x := range ts { // threads that exited keep their last reading
			s.th1[tid] = max(x, s.th1[tid])
		}
	}
	s.t1, s.v1 = now, max(v, s.v1)
	s.n++
}

// Busiest returns the thread that asked for the most CPU between the
// first and the latest reading, as a share of one core (0: unknown, or
// not a StartThreadDemand sampler).
func (s *DemandSampler) Busiest() (tid uint64, pct float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	el := s.t1.Sub(s.t0)
	if s.n < 2 || el < time.Second {
		return 0, 0
	}
	var best int64
	for t, v := range s.th1 {
		if d := v - s.th0[t]; d > best || d == best && t < tid {
			tid, best = t, d
		}
	}
	return tid, float64(best) * 100 / float64(el.Nanoseconds())
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
