package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/metrics"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/serve"
	"github.com/clrspy/clrspy/web"
)

func init() { commands = append(commands, newServeCmd) }

func newServeCmd() *cobra.Command {
	var (
		cfg               serve.Config
		listen, portMode  string
		labels            []string
		attach            bool
		info, warn, slow  time.Duration
		level             string
		logJSON           bool
		captureMB, ringMB int
		otlpURL           string
		otlpEvery         time.Duration
		webView           bool
	)
	c := &cobra.Command{
		Use:   "serve [--listen ADDR] [--pid N]... [--name NAME]... [--diagnostic-port PATH]",
		Short: "Watch every .NET process and export GC pauses, locks and counters to Prometheus",
		Long: `serve is the long-running form of clrspy: it keeps one light EventPipe session
on every .NET process this user may attach to (in other pid and mount
namespaces too when run as root; --pid and --name narrow it), picks up new
processes within a couple of seconds, and serves on --listen (loopback by
default; every endpoint is read-only):

  /metrics                                 Prometheus text, OpenMetrics or protobuf (native histograms)
  /healthz                                 liveness
  /targets                                 the monitored processes (JSON)
  /debug/pprof/profile?pid=N&seconds=S     a CPU profile of one process (go tool pprof, Parca, Pyroscope)
  /debug/pprof/contention?pid=N&seconds=S  its lock contention, likewise
  /triage?pid=N&seconds=S                  its findings over S s (clrspy triage's JSON; format=text)
  /  (with --web, in a browser)            the live web view: every process's GCs as they happen

Metric names follow the OpenTelemetry .NET runtime semantic conventions as the
OpenTelemetry Prometheus exporter spells them (dotnet_gc_collections_total,
dotnet_gc_pause_time_seconds_total, ...); what only clrspy measures is named
clrspy_* (pause and time-to-suspend histograms, suspensions by reason, lock
waits). Every series has the labels pid and process, plus --label ones.

Listen mode (--diagnostic-port PATH) is for containers: a .NET process started
with DOTNET_DiagnosticPorts=PATH connects to clrspy at startup and waits,
suspended, until its session is open, so not one GC is missed. Share PATH's
directory with the application's container (a volume).

The pause log (one line per GC pause, with pid and process) goes to stderr;
--capture-on-pause-over saves the trace around long pauses. A process that
exits keeps its series (clrspy_target_up 0) for --grace, then they go.
SIGINT or SIGTERM stops every session cleanly; the processes run on.`,
		Example: `  clrspy serve
  clrspy serve --listen 0.0.0.0:9464 --label cluster=prod --name MyService
  clrspy serve --diagnostic-port /diag/clrspy.sock --attach=false
  clrspy serve --capture-on-pause-over 200ms --capture-dir /var/lib/clrspy
  clrspy serve --web    # then open http://127.0.0.1:9464/ in a browser
  go tool pprof -top 'http://127.0.0.1:9464/debug/pprof/profile?pid=4242&seconds=10'`,
		Args: cobra.NoArgs,
	}
	f := c.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:9464", "address of the HTTP endpoints")
	f.IntSliceVar(&cfg.Pids, "pid", nil, "monitor this process only (repeatable; with --name: either)")
	f.StringArrayVar(&cfg.Names, "name", nil, "monitor the processes with this name only (repeatable)")
	f.BoolVar(&attach, "attach", true, "find running processes and attach to them (false: only --diagnostic-port)")
	f.StringVar(&cfg.DiagnosticPort, "diagnostic-port", "", "listen mode: create this reverse diagnostic port; runtimes started with DOTNET_DiagnosticPorts=PATH connect to it")
	f.StringVar(&portMode, "diagnostic-port-mode", "0600", "file mode of the diagnostic port (runtimes running as another user need 0666)")
	f.StringArrayVar(&cfg.SocketDirs, "socket-dir", nil, "directory where runtimes create their diagnostics sockets, watched for new ones (repeatable; default /tmp and $TMPDIR)")
	f.DurationVar(&cfg.Grace, "grace", time.Minute, "how long an exited process's series stay")
	f.StringArrayVar(&labels, "label", nil, "name=value label added to every series (repeatable)")
	f.Uint32Var(&cfg.BufferMB, "buffer-mb", 64, "runtime-side event buffer of each session, in MB")
	f.DurationVar(&cfg.CounterInterval, "counter-interval", 5*time.Second, "how often runtimes publish their counters")
	f.DurationVar(&info, "info", 10*time.Millisecond, "pauses from this long are logged at Info level (shorter: Debug)")
	f.DurationVar(&warn, "warn", 100*time.Millisecond, "pauses from this long are logged at Warn level")
	f.DurationVar(&slow, "slow-suspend", 5*time.Millisecond, "flag suspensions (time to stop threads) longer than this")
	f.StringVar(&level, "level", "info", "log level: debug, info, warn or none")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines")
	f.DurationVar(&cfg.Capture.Over, "capture-on-pause-over", 0, "save the trace around every GC pause longer than this, per process, to --capture-dir")
	f.StringVar(&cfg.Capture.Dir, "capture-dir", "", "directory of the captures (PROCESS_PID_gcN_TIME.nettrace)")
	f.DurationVar(&cfg.Capture.Before, "capture-before", 30*time.Second, "how much of the stream before the pause a capture holds")
	f.DurationVar(&cfg.Capture.After, "capture-after", 5*time.Second, "how much of the stream after the pause a capture holds")
	f.IntVar(&cfg.Capture.MaxFiles, "capture-max-files", 20, "captures kept in --capture-dir (oldest removed first)")
	f.IntVar(&captureMB, "capture-max-mb", 1024, "bytes of captures kept in --capture-dir, in MB (oldest removed first)")
	f.IntVar(&ringMB, "capture-ring-mb", 32, "memory of each process's capture ring, in MB")
	f.StringVar(&cfg.Sampler, "sampler", "auto", "CPU profiles (/debug/pprof/profile): perf (perf_event, mixed-mode), eventpipe (the runtime's sampler) or auto (perf where the kernel permits it)")
	f.StringVar(&otlpURL, "otlp-endpoint", "", "also push the metrics to this OTLP/HTTP endpoint (http://collector:4318)")
	f.DurationVar(&otlpEvery, "otlp-interval", 15*time.Second, "how often to push with --otlp-endpoint")
	f.BoolVar(&webView, "web", false, "also serve the live web view at / (open it in a browser): each process's GC pauses, suspensions and locks as they happen, from the same sessions")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.NoAttach = !attach
		if info > warn {
			return fmt.Errorf("--info (%v) must not be longer than --warn (%v)", info, warn)
		}
		lvl, err := report.ParseLevel(level)
		if err != nil {
			return err
		}
		cfg.PauseLog = &report.PauseLogOptions{Info: info, Warn: warn, SlowSuspend: slow, Level: lvl, JSON: logJSON,
			Color: !logJSON && isTerminal(os.Stderr) && os.Getenv("NO_COLOR") == ""}
		mode, err := strconv.ParseUint(portMode, 8, 32)
		if err != nil || mode > 0o777 {
			return fmt.Errorf("--diagnostic-port-mode %q: want an octal file mode such as 0600 or 0666", portMode)
		}
		cfg.PortMode = os.FileMode(mode)
		if captureMB <= 0 || ringMB <= 0 {
			return errors.New("--capture-max-mb and --capture-ring-mb must be positive")
		}
		cfg.Capture.MaxBytes, cfg.Capture.RingBytes = int64(captureMB)<<20, ringMB<<20
		lbls := map[string]string{}
		for _, l := range labels {
			if err := metrics.ParseLabel(l, lbls); err != nil {
				return err
			}
		}
		if otlpEvery <= 0 {
			return fmt.Errorf("--otlp-interval %v: must be positive", otlpEvery)
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return fmt.Errorf("--listen %s: %v", listen, listenError(err))
		}
		defer ln.Close()
		var live *web.Monitors
		if webView {
			// The page's timeline shows a minute; 10,000 rows per process
			// is that at over 150 GCs a second, and bounds serve's memory.
			live = web.NewMonitors(web.MonitorsOptions{MaxRows: 10_000})
			defer live.Close()
			cfg.Sessions = live
		}
		d, err := serve.New(cfg)
		if err != nil {
			return err
		}
		reg, err := metrics.NewRegistry(d, metrics.Options{Labels: lbls, Self: true})
		if err != nil {
			return err
		}
		ho := serve.HandlerOptions{Registry: reg}
		if live != nil {
			ho.Web = web.Handler(live, web.Options{Title: "clrspy serve"})
		}
		h, err := d.Handler(ho)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var otlp *metrics.OTLP
		if otlpURL != "" {
			if otlp, err = metrics.StartOTLP(ctx, otlpURL, d, otlpEvery, lbls); err != nil {
				return err
			}
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go srv.Serve(ln)
		notice(fmt.Sprintf("serving http://%s/metrics", ln.Addr()))
		warnMissingPids(cfg.Pids)
		if live != nil {
			notice(fmt.Sprintf("live web view: http://%s/", ln.Addr()))
		}
		if env := d.DiagnosticPortEnv(); env != "" {
			notice("listening for runtimes started with " + env)
		}
		// The first signal stops every session cleanly (rundowns flush, the
		// processes run on); a second exits at once.
		sigs := make(chan os.Signal, 2)
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(sigs)
		go func() {
			<-sigs
			notice("stopping the sessions")
			cancel()
			<-sigs
			notice("second signal: exiting without waiting for the sessions")
			os.Exit(1)
		}()
		runErr := d.Run(ctx)
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		srv.Shutdown(sctx)
		if otlp != nil {
			otlp.Shutdown(sctx)
		}
		return runErr
	}
	return c
}

// listenError is the cause of a failed listen, without Go's operation
// prefix ("listen tcp 127.0.0.1:9464: bind: ...").
func listenError(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		var se *os.SyscallError
		if errors.As(oe.Err, &se) {
			return se.Err
		}
		return oe.Err
	}
	return err
}

// warnMissingPids says which --pid names no process now: serve starts
// anyway (a process may get the pid later), but a mistyped pid should not
// look like a quiet process.
func warnMissingPids(pids []int) {
	for _, p := range pids {
		if _, err := os.Stat("/proc/" + strconv.Itoa(p)); errors.Is(err, fs.ErrNotExist) {
			warn("--pid %d: no process has this pid now; serve will monitor one that gets it", p)
		}
	}
}
