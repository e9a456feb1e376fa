package serve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/stacks"
)

// Config configures a Daemon. The zero value watches every process this
// user may attach to, with the defaults below.
type Config struct {
	// Pids and Names narrow the targets (either list may match; empty:
	// every process).
	Pids  []int
	Names []string
	// NoAttach turns discovery off: only runtimes connecting to the
	// DiagnosticPort are monitored.
	NoAttach bool
	// DiagnosticPort is the path of a reverse diagnostic port runtimes
	// connect to (DOTNET_DiagnosticPorts=PATH); PortMode its file mode (0:
	// 0600).
	DiagnosticPort string
	PortMode       os.FileMode
	// Grace is how long an exited target's series stay (0: 1 min).
	Grace time.Duration
	// ScanInterval is the period of the /proc scan (0: 1 s).
	ScanInterval time.Duration
	// SocketDirs are the directories watched for new diagnostics sockets
	// (nil: /tmp and $TMPDIR). Processes with another TMPDIR are found by
	// the scan, which then watches their directory too.
	SocketDirs []string
	// BufferMB is the runtime-side buffer of each session (0: 64).
	BufferMB uint32
	// CounterInterval is how often the runtime publishes its counters
	// (0: 5 s).
	CounterInterval time.Duration
	// MemoryInterval is how often each target's memory split is read from
	// its /proc/PID/smaps (clrspy_process_memory_bytes, the cgroup's
	// families; 0: 10 s; negative: never).
	MemoryInterval time.Duration
	// Sampler is the CPU profiles' sampler: "perf" (perf_event, mixed
	// mode), "eventpipe" (the runtime's sample profiler) or "auto" (perf
	// where the kernel permits it; ""  is auto).
	Sampler string
	// Exceptions also asks every session for the exception events with
	// their stacks (the session is then no longer stackless: every event
	// carries a stack) and exports the top throw sites per type
	// (clrspy_exceptions_thrown_total).
	Exceptions bool
	// SnapshotOnGen2Growth, when positive, watches every target's gen2
	// size: the first GC seen takes a heap snapshot as the baseline (each
	// snapshot is a blocking gen2 GC in the target); after a GC whose gen2
	// size grew by this percentage since the last snapshot's, another is
	// taken (at most one a minute), and the types that grew most since
	// the last one are logged at warning level and exported
	// (clrspy_heap_growth_bytes). Only the last snapshot's per-type table
	// is kept.
	SnapshotOnGen2Growth float64
	// Retry is the first delay before a failed session is opened again
	// (doubled up to a minute; 0: 2 s).
	Retry time.Duration

	// PauseLog, when set, logs every target's pauses (report.PauseLog,
	// with pid and process attributes) to LogOutput.
	PauseLog *report.PauseLogOptions
	// LogOutput receives the pause log and the daemon's own messages (nil:
	// stderr).
	LogOutput io.Writer
	// Capture saves the window around long pauses (Over 0: off).
	Capture Capture
	// Logger receives the daemon's own messages (nil: a logger in the
	// pause log's format on LogOutput, at the pause log's level).
	Logger *slog.Logger
	// Sessions, when set, follows every target's monitor (the live web
	// view's web.Monitors).
	Sessions Sessions
	// CPUProfile, when its Hz is set, samples every target with the
	// perf_event sampler (where the kernel permits it) in windows, and
	// gives each window's profile to Sessions if it is a CPUSessions (the
	// live page's flame graph).
	CPUProfile CPUProfile
}

// CPUProfile configures the continuous low-rate CPU profile of every
// target: perf.Profile at Hz samples per second per thread for Window
// (0: 30 s), again and again while the target's session lives. Each
// window is its own perf session (an EventPipe session naming JIT'd code,
// with a rundown at its end), so every window's names are complete.
type CPUProfile struct {
	Hz     int
	Window time.Duration
}

// CPUSessions is a Sessions that also takes each session's CPU profiles,
// one per CPUProfile window, under a label saying what the samples
// measure (report.LabelCPU).
type CPUSessions interface {
	SetCPU(id, label string, p *stacks.Profile)
}

// Sessions follows the daemon's monitoring sessions, one id per session
// (a target whose session is reopened gets a new one): Prepare adds its
// hooks to the session's monitor options before the monitor is made, Add
// gives it the monitor, Ended says the session's stream has ended, Remove
// that the session is gone (replaced by the target's next one, or the
// target dropped after Grace). The calls come from the session's
// goroutine and the daemon's, never with the daemon's lock held.
type Sessions interface {
	Prepare(id string, opts *monitor.Options)
	Add(id, name string, pid int, hdr *nettrace.Header, mon *monitor.Monitor)
	Ended(id string)
	Remove(id string)
}

// Capture configures pause-triggered captures: the window of `clrspy
// record --save-on-pause-over` around every pause longer than Over, per
// target, written to Dir as PROCESS_PID_gcN_TIME.nettrace. MaxFiles and
// MaxBytes cap the directory's captures: the oldest are removed first.
type Capture struct {
	Over          time.Duration
	Dir           string
	Before, After time.Duration // 0: 30 s, 5 s
	MaxFiles      int           // 0: 20
	MaxBytes      int64         // 0: 1 GiB
	RingBytes     int           // per target (0: 32 MiB)
}

func (c *Config) grace() time.Duration           { return dur(c.Grace, time.Minute) }
func (c *Config) scanInterval() time.Duration    { return dur(c.ScanInterval, time.Second) }
func (c *Config) retry() time.Duration           { return dur(c.Retry, 2*time.Second) }
func (c *Config) cpuWindow() time.Duration       { return dur(c.CPUProfile.Window, 30*time.Second) }
func (c *Config) counterInterval() time.Duration { return dur(c.CounterInterval, 5*time.Second) }

func (c *Config) memoryInterval() time.Duration {
	if c.MemoryInterval < 0 {
		return -1
	}
	return dur(c.MemoryInterval, 10*time.Second)
}

func (c *Config) sampler() string {
	if c.Sampler == "" {
		return "auto"
	}
	return c.Sampler
}

func (c *Config) bufferMB() uint32 {
	if c.BufferMB == 0 {
		return 64
	}
	return c.BufferMB
}

func dur(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

func (c *Capture) defaults() {
	c.Before = dur(c.Before, 30*time.Second)
	c.After = dur(c.After, 5*time.Second)
	if c.MaxFiles <= 0 {
		c.MaxFiles = 20
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = 1 << 30
	}
	if c.RingBytes <= 0 {
		c.RingBytes = 32 << 20
	}
}

// check validates the configuration: one line per problem, in the flags'
// words.
func (c *Config) check() error {
	for _, p := range c.Pids {
		if p <= 0 {
			return fmt.Errorf("--pid %d: a process id is positive", p)
		}
	}
	for _, n := range c.Names {
		if n == "" {
			return errors.New("--name: empty name")
		}
	}
	switch c.Sampler {
	case "", "auto", "perf", "eventpipe":
	default:
		return fmt.Errorf("unknown --sampler %q: use perf, eventpipe or auto", c.Sampler)
	}
	if c.NoAttach && c.DiagnosticPort == "" {
		return errors.New("--attach=false leaves nothing to monitor: give --diagnostic-port PATH")
	}
	switch {
	case c.Grace < 0:
		return fmt.Errorf("--grace %v: must not be negative", c.Grace)
	case c.CounterInterval < 0:
		return fmt.Errorf("--counter-interval %v: must not be negative", c.CounterInterval)
	case math.IsNaN(c.SnapshotOnGen2Growth) || math.IsInf(c.SnapshotOnGen2Growth, 0) || c.SnapshotOnGen2Growth < 0:
		return fmt.Errorf("--snapshot-on-gen2-growth %v: a percentage, positive (0: off)", c.SnapshotOnGen2Growth)
	}
	cp := &c.Capture
	switch {
	case cp.Over < 0:
		return fmt.Errorf("--save-on-pause-over %v: must be positive", cp.Over)
	case cp.Over > 0 && cp.Dir == "":
		return errors.New("--save-on-pause-over needs --save-dir DIR")
	case cp.Over == 0 && cp.Dir != "":
		return errors.New("--save-dir needs --save-on-pause-over D")
	case cp.Before < 0 || cp.After < 0 || cp.MaxFiles < 0 || cp.MaxBytes < 0 || cp.RingBytes < 0:
		return errors.New("--before, --after, --save-max-files, --save-max-mb and --ring-mb must be positive")
	}
	if cp.Over > 0 {
		st, err := os.Stat(cp.Dir)
		switch {
		case err != nil && os.IsNotExist(err):
			return fmt.Errorf("--save-dir %s: no such directory", cp.Dir)
		case err != nil:
			return fmt.Errorf("--save-dir %s: %w", cp.Dir, err)
		case !st.IsDir():
			return fmt.Errorf("--save-dir %s: not a directory", cp.Dir)
		}
		f, err := os.CreateTemp(cp.Dir, ".clrspy-check-*")
		if err != nil {
			return fmt.Errorf("--save-dir %s: cannot write there", cp.Dir)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}
