package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/serve"
	"github.com/clrspy/clrspy/report"
)

func init() { commands = append(commands, newServeCmd) }

func newServeCmd() *cobra.Command {
	var (
		cfg               serve.Config
		portMode          string
		labels            []string
		attach            bool
		info, warn, slow  time.Duration
		level             string
		logJSON           bool
		captureMB, ringMB int
		otlpURL           string
		otlpEvery         time.Duration
		webView           bool
		cpuProfile        bool
		leakWatch         bool
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
      &off_cpu=1                           ... with time off the CPU too (perf sampler): where threads block, for how long
  /debug/pprof/contention?pid=N&seconds=S  its lock contention, likewise
  /triage?pid=N&seconds=S                  its findings over S s (clrspy triage's JSON; format=text)
  /debug/pprof/heap?pid=N                  a heap snapshot of one process, taken on request: a BLOCKING
                                           gen2 GC in the process (it walks the heap while paused); a
                                           pprof heap profile whose stacks are retention paths (as
                                           clrspy snapshot --format pprof); one at a time per process
  /  (with --web, in a browser)            the live web view: every process's GCs as they happen
                                           (--cpu-profile adds a CPU flame graph: perf_event at
                                           19 Hz per thread, one profile per 30 s window)

Metric names follow the OpenTelemetry .NET runtime semantic conventions as the
OpenTelemetry Prometheus exporter spells them (dotnet_gc_collections_total,
dotnet_gc_pause_time_seconds_total, ...); what only clrspy measures is named
clrspy_* (pause and time-to-suspend histograms, suspensions by reason, lock
waits). Every series has the labels pid and process, plus --label ones.

Listen mode (--diagnostic-port PATH) is for containers: a .NET process started
with DOTNET_DiagnosticPorts=PATH connects to clrspy at startup and waits,
suspended, until its session is open, so not one GC is missed. Share PATH's
directory with the application's container (a volume).

Exposed on a network (--listen not on loopback), every endpoint but /healthz
needs a bearer token: --auth-token-file FILE (a new token is written there
when the file does not exist, and printed); with --tls-cert and --tls-key
serve speaks HTTPS. A non-loopback --listen with neither is refused unless
--insecure-no-auth says so. On loopback the token is optional, only
loopback Host names are answered (against DNS rebinding), and each
connection's user is known by the kernel: clrspy's user and root read
everything, another user only its own processes. Cross-site requests are
refused everywhere; a process's heap snapshots are at least 10 s apart and
its profiles 1 s (429 with Retry-After). docs/SECURITY.md has the threat
model and how to run it exposed.

The leak watch is on (--leak-watch=false, or --snapshot-on-gen2-growth 0,
turns it off). It costs nothing until it judges a leak: it reads gen2's size
after each gen2 GC from the session already open. Past the start-up (the
first --leak-watch-window, 5 min, after the first GC seen), when gen2 has
grown over at least --leak-watch-window, through at least 3 gen2 GCs with
none more than 5 % under the highest before it, by --leak-watch-growth % (10)
and 1 MiB, it takes a heap snapshot; after as much growth again (a minute at
least), a second, and logs at warning level and exports the types that grew
most between the two (clrspy_heap_growth_bytes). If gen2 falls back first,
the second is not taken. At most one pair per process per --leak-watch-every
(6 h). Each snapshot is a BLOCKING gen2 GC and a heap walk in the process:
measured 236 ms for a heap of 1 M objects (34 MiB), 1.1 to 3.1 s for 9 M
(docs/PERFORMANCE.md). --snapshot-on-gen2-growth PCT is the eager watch
instead: a snapshot at each process's first GC, then another whenever gen2
grew by PCT % since the last one (at most one a minute).

The pause log (one line per GC pause, with pid and process) goes to stderr;
--save-on-pause-over saves the trace around long pauses. A process that
exits keeps its series (clrspy_target_up 0) for --grace, then they go.
SIGINT or SIGTERM stops every session cleanly; the processes run on.`,
		Example: `  clrspy serve
  clrspy serve --listen 0.0.0.0:9464 --label cluster=prod --name MyService
  clrspy serve --listen 0.0.0.0:9464 --auth-token-file /etc/clrspy/token --tls-cert cert.pem --tls-key key.pem
  clrspy serve --diagnostic-port /diag/clrspy/clrspy.sock --attach=false
  clrspy serve --save-on-pause-over 200ms --save-dir /var/lib/clrspy
  clrspy serve --web    # then open http://127.0.0.1:9464/ in a browser
  clrspy serve --web --cpu-profile --name MyService
  clrspy serve --leak-watch-every 1h --name MyService
  clrspy serve --leak-watch=false
  clrspy serve --snapshot-on-gen2-growth 25 --name MyService
  go tool pprof -top 'http://127.0.0.1:9464/debug/pprof/profile?pid=4242&seconds=10'
  go tool pprof -http : 'http://127.0.0.1:9464/debug/pprof/heap?pid=4242'`,
		Args: cobra.NoArgs,
	}
	f := c.Flags()
	f.StringVar(&cfg.HTTP.Listen, "listen", "127.0.0.1:9464", "address of the HTTP endpoints")
	f.IntSliceVar(&cfg.Pids, "pid", nil, "monitor this process only (repeatable; with --name: either)")
	f.StringArrayVar(&cfg.Names, "name", nil, "monitor the processes with this name only (repeatable)")
	f.BoolVar(&attach, "attach", true, "find running processes and attach to them (false: only --diagnostic-port)")
	f.StringVar(&cfg.DiagnosticPort, "diagnostic-port", "", "listen mode: create this reverse diagnostic port; runtimes started with DOTNET_DiagnosticPorts=PATH connect to it")
	f.StringVar(&portMode, "diagnostic-port-mode", "0600", "file mode of the diagnostic port (runtimes running as another user need 0666)")
	f.StringArrayVar(&cfg.SocketDirs, "socket-dir", nil, "directory where runtimes create their diagnostics sockets, watched for new ones (repeatable; default /tmp and $TMPDIR)")
	f.DurationVar(&cfg.Grace, "grace", time.Minute, "how long an exited process's series stay")
	f.StringArrayVar(&labels, "label", nil, "name=value label added to every series (repeatable)")
	f.Uint32Var(&cfg.BufferMB, "buffer-mb", 64, "runtime-side event buffer of each session, in MiB")
	f.DurationVar(&cfg.CounterInterval, "counter-interval", 5*time.Second, "how often runtimes publish their counters")
	f.DurationVar(&cfg.MemoryInterval, "memory-interval", 10*time.Second, "how often each target's memory split is read from /proc/PID/smaps (clrspy_process_memory_bytes; negative: never)")
	f.DurationVar(&info, "info", 10*time.Millisecond, "pauses from this long are logged at Info level (shorter: Debug)")
	f.DurationVar(&warn, "warn", 100*time.Millisecond, "pauses from this long are logged at Warn level")
	f.DurationVar(&slow, "slow-suspend", 5*time.Millisecond, "flag suspensions (time to stop threads) longer than this")
	f.StringVar(&level, "level", "info", "log level: debug, info, warn or none")
	f.BoolVar(&logJSON, "log-json", false, "log as JSON lines")
	// The trigger's flags are spelled as gc's and record's (docs/FLAGS.md);
	// the old capture-* names stay as deprecated aliases.
	f.DurationVar(&cfg.Capture.Over, "save-on-pause-over", 0, "save the trace around every GC pause longer than this, per process, to --save-dir")
	f.StringVar(&cfg.Capture.Dir, "save-dir", "", "directory the saved traces go to (PROCESS_PID_gcN_TIME.nettrace)")
	addWindowFlags(c, &cfg.Capture.Before, &cfg.Capture.After)
	f.IntVar(&cfg.Capture.MaxFiles, "save-max-files", 20, "saved traces kept in --save-dir (oldest removed first)")
	f.IntVar(&captureMB, "save-max-mb", 1024, "size of the saved traces kept in --save-dir, in MiB (oldest removed first)")
	f.IntVar(&ringMB, "ring-mb", 32, "with --save-on-pause-over: memory bound of each process's ring, in MiB")
	for old, name := range map[string]string{"capture-on-pause-over": "save-on-pause-over", "capture-dir": "save-dir",
		"capture-before": "before", "capture-after": "after", "capture-max-files": "save-max-files",
		"capture-max-mb": "save-max-mb", "capture-ring-mb": "ring-mb"} {
		aliasFlag(c, old, name)
	}
	markOutput(c, "save-dir", "dir")
	f.StringVar(&cfg.Sampler, "sampler", "auto", "CPU profiles (/debug/pprof/profile): perf (perf_event, mixed-mode), eventpipe (the runtime's sampler) or auto (perf where the kernel permits it)")
	f.StringVar(&otlpURL, "otlp-endpoint", "", "also push the metrics to this OTLP/HTTP endpoint (http://collector:4318)")
	f.DurationVar(&otlpEvery, "otlp-interval", 15*time.Second, "how often to push with --otlp-endpoint")
	f.Float64Var(&cfg.SnapshotOnGen2Growth, "snapshot-on-gen2-growth", 0, "eager leak watch instead of the default one: take a heap snapshot (a blocking gen2 GC) at each process's first GC, then another after a GC whose gen2 grew by this many percent since the last (at most one a minute); log the types that grew most at warning level and export them (clrspy_heap_growth_bytes); 0 turns every leak watch off")
	f.BoolVar(&leakWatch, "leak-watch", true, "watch every process for leaks: a pair of heap snapshots (each a blocking gen2 GC) only when gen2 grew steadily over --leak-watch-window after the start-up, at most one pair per --leak-watch-every; the types that grew most logged and exported (clrspy_heap_growth_bytes)")
	f.DurationVar(&cfg.LeakWatch.Window, "leak-watch-window", 5*time.Minute, "--leak-watch: the least time gen2 must grow over (also the start-up not judged)")
	f.Float64Var(&cfg.LeakWatch.Growth, "leak-watch-growth", 10, "--leak-watch: by how many percent (and 1 MiB), after gen2 GCs; the second snapshot after as much again")
	f.DurationVar(&cfg.LeakWatch.Every, "leak-watch-every", 6*time.Hour, "--leak-watch: at most one pair of snapshots per process this often")
	f.BoolVar(&cfg.Exceptions, "exceptions", false, "also count every exception with its stack and export the top throw sites per type (clrspy_exceptions_thrown_total; the sessions then carry stacks, a cost docs/PERFORMANCE.md measures)")
	f.BoolVar(&webView, "web", false, "also serve the live web view at / (open it in a browser): each process's GC pauses, suspensions, locks, thread pool (and exceptions, with --exceptions) as they happen, from the same sessions")
	f.BoolVar(&cpuProfile, "cpu-profile", false, "with --web: sample every process with the perf_event sampler at a low rate (--cpu-profile-hz), so the live page has a CPU flame graph (each window's own EventPipe session names the code)")
	f.IntVar(&cfg.CPUProfile.Hz, "cpu-profile-hz", 19, "--cpu-profile: samples per second per thread")
	f.DurationVar(&cfg.CPUProfile.Window, "cpu-profile-window", 30*time.Second, "--cpu-profile: each flame graph covers this long; a new one follows")
	f.StringVar(&cfg.HTTP.TokenFile, "auth-token-file", "", "require the token in this file (Authorization: Bearer TOKEN) on every endpoint but /healthz; a missing file is created with a new token, printed once")
	f.StringVar(&cfg.HTTP.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate (chain) and --tls-key")
	f.StringVar(&cfg.HTTP.TLSKey, "tls-key", "", "the PEM private key of --tls-cert")
	f.BoolVar(&cfg.HTTP.Insecure, "insecure-no-auth", false, "allow a non-loopback --listen without a token or TLS: anyone who can reach the port reads every process's metrics, command lines and profiles (on loopback: every local user does, not only clrspy's user and root)")
	f.IntVar(&cfg.HTTP.MaxConnections, "max-connections", 256, "HTTP connections open at once; past it a new one gets 503 at once")
	f.IntVar(&cfg.HTTP.MaxWebClients, "max-web-clients", 64, "live web views (websockets) open at once; past it a new one gets 503")
	c.RunE = func(cmd *cobra.Command, args []string) error {
		cfg.NoAttach, cfg.Web = !attach, webView
		// --snapshot-on-gen2-growth 0 given is the old flag's off.
		cfg.LeakWatch.Off = !leakWatch || (cmd.Flags().Changed("snapshot-on-gen2-growth") && cfg.SnapshotOnGen2Growth == 0)
		cfg.CPUProfile.On = cpuProfile
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
			return errors.New("--save-max-mb and --ring-mb must be positive")
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
		exp, err := cfg.Validate()
		if err != nil {
			return err
		}
		ln, err := serve.Listen(cfg.HTTP.Listen)
		if err != nil {
			return err
		}
		defer ln.Close()
		token, tokenNote, err := exp.ResolveToken(cfg.HTTP.TokenFile)
		if err != nil {
			return err
		}
		for _, w := range append([]string{tokenNote}, exp.Warnings...) {
			if w != "" {
				notice(w)
			}
		}
		d, err := serve.New(cfg)
		if err != nil {
			return err
		}
		reg, err := metrics.NewRegistry(d.Fleet(), metrics.Options{Labels: lbls, Self: true})
		if err != nil {
			return err
		}
		h, err := d.Handler(serve.HandlerOptions{Registry: reg, Token: token, LoopbackHosts: exp.Loopback, PeerUsers: exp.PeerUsers})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var otlp *metrics.OTLP
		if otlpURL != "" {
			if otlp, err = metrics.StartOTLP(ctx, otlpURL, d.Fleet(), otlpEvery, lbls); err != nil {
				return err
			}
		}
		srv := serve.Server(h)
		lim := serve.LimitListener(ln, cfg.HTTP.MaxConnections, !exp.TLS, serve.RefusalNotice(cfg.HTTP.MaxConnections, notice))
		scheme := "http"
		if exp.TLS {
			scheme = "https"
			go srv.ServeTLS(lim, cfg.HTTP.TLSCert, cfg.HTTP.TLSKey)
		} else {
			go srv.Serve(lim)
		}
		notice(fmt.Sprintf("serving %s://%s/metrics", scheme, ln.Addr()))
		if webView {
			notice(fmt.Sprintf("live web view: %s://%s/", scheme, ln.Addr()))
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
