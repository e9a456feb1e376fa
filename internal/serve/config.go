package serve

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/flightrec"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
)

// Config configures a Daemon: its fleet (the targets and their
// sessions, package fleet) and what serve adds on each target. The zero
// value watches every process this user may attach to, with the defaults
// below.
type Config struct {
	fleet.Config
	// Sampler is the CPU profiles' sampler: "perf" (perf_event, mixed
	// mode), "eventpipe" (the runtime's sample profiler) or "auto" (perf
	// where the kernel permits it; ""  is auto).
	Sampler string
	// SnapshotOnGen2Growth, when positive, watches every target's gen2
	// size: the first GC seen takes a heap snapshot as the baseline (each
	// snapshot is a blocking gen2 GC in the target); after a GC whose gen2
	// size grew by this percentage since the last snapshot's, another is
	// taken (at most one a minute), and the types that grew most since
	// the last one are logged at warning level and exported
	// (clrspy_heap_growth_bytes). Only the last snapshot's per-type table
	// is kept. It replaces the default LeakWatch.
	SnapshotOnGen2Growth float64
	// LeakWatch is the default leak watch, on unless Off (and unless
	// SnapshotOnGen2Growth is set): a pair of heap snapshots, the types
	// that grew most between them logged and exported as above, only
	// when gen2 grew steadily over minutes after the start-up, at most
	// one pair per LeakWatch.Every (leakJudge has the judgement).
	LeakWatch LeakWatch

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
	// Web serves the live web view at / (HandlerOptions.Web unless
	// set): every session's page, from the same monitors.
	Web bool
	// CPUProfile, when its Hz is set, samples every target with the
	// perf_event sampler (where the kernel permits it) in windows, and
	// gives each window's profile to the live web view (its flame graph).
	CPUProfile CPUProfile
	// HTTP is where the endpoints listen and how they are guarded; only
	// Validate reads it (the command binds the listener and serves).
	HTTP HTTP
}

// HTTP configures the HTTP side of serve: its listen address and its
// guards, in the flags' terms.
type HTTP struct {
	Listen          string // --listen host:port
	TokenFile       string // --auth-token-file
	TLSCert, TLSKey string
	// Insecure (--insecure-no-auth) serves without a token where one
	// would be required (a non-loopback address), and on loopback turns
	// the per-user check of connections off.
	Insecure       bool
	MaxConnections int // --max-connections (> 0)
	MaxWebClients  int // --max-web-clients (> 0)
}

// Token sources of an Exposure.
const (
	TokenNone     = ""         // no token
	TokenFromFile = "file"     // the first line of TokenFile (made when missing)
	TokenNew      = "generate" // a new token for this run, printed once
)

// Exposure is Validate's decision about the HTTP side: whether the
// address is loopback, where the token comes from, whether connections
// are told apart by their user, and the warnings to print at start.
type Exposure struct {
	Loopback  bool
	Token     string // TokenNone, TokenFromFile or TokenNew
	PeerUsers bool   // HandlerOptions.PeerUsers
	TLS       bool
	Warnings  []string
}

// Validate checks the whole configuration (check's rules, then the HTTP
// side's) and decides the HTTP side's exposure:
//
//	listen     token file  TLS  --insecure-no-auth  token      peers told apart  warning
//	loopback   no          any  no                  none       yes               -
//	loopback   no          any  yes                 none       no                every local user reads everything
//	loopback   yes         any  any                 the file   no                -
//	other      yes         yes  any                 the file   no                -
//	other      yes         no   any                 the file   no                clear text
//	other      no          yes  any                 new, shown no                -
//	other      no          no   yes                 none       no                anyone who reaches the port
//	other      no          no   no                  refused, in one line
//
// A key file (--tls-key) other users may read, or owned by another user
// than clrspy's or root, is refused as the token file is. The command's
// own rules (command) come first: the leak watch's, --cpu-profile's,
// the pause log's; a --pid no process has now is a warning.
func (c *Config) Validate() (Exposure, error) {
	if err := c.check(); err != nil {
		return Exposure{}, err
	}
	var e Exposure
	if err := c.command(&e); err != nil {
		return e, err
	}
	h := &c.HTTP
	if h.MaxConnections <= 0 || h.MaxWebClients <= 0 {
		return e, errors.New("--max-connections and --max-web-clients must be positive")
	}
	if (h.TLSCert == "") != (h.TLSKey == "") {
		return e, errors.New("--tls-cert and --tls-key go together")
	}
	if h.TLSCert != "" {
		if _, err := checkSecretFile("--tls-key", h.TLSKey); err != nil {
			return e, err
		}
		if _, err := tls.LoadX509KeyPair(h.TLSCert, h.TLSKey); err != nil {
			return e, fmt.Errorf("--tls-cert %s, --tls-key %s: %v", h.TLSCert, h.TLSKey, err)
		}
		e.TLS = true
	}
	host, _, err := net.SplitHostPort(h.Listen)
	if err != nil {
		return e, fmt.Errorf("--listen %s: want host:port (127.0.0.1:9464, [::1]:9464, :9464 for every address)", h.Listen)
	}
	e.Loopback = LoopbackName(host)
	switch {
	case h.TokenFile != "":
		e.Token = TokenFromFile
	case e.Loopback:
		e.PeerUsers = !h.Insecure
		if h.Insecure {
			e.Warnings = append(e.Warnings, fmt.Sprintf("warning: --listen %s with --insecure-no-auth: every local user (and their processes) reads every process's data and may pause them with heap snapshots", h.Listen))
		}
	case e.TLS:
		e.Token = TokenNew
	case !h.Insecure:
		return e, fmt.Errorf("--listen %s is not loopback: give --auth-token-file FILE (created with a new token when missing) and --tls-cert/--tls-key, or --insecure-no-auth to serve every process's data to anyone who reaches the port", h.Listen)
	}
	if !e.Loopback && !e.TLS {
		if e.Token != TokenNone {
			e.Warnings = append(e.Warnings, fmt.Sprintf("warning: --listen %s without --tls-cert: the token travels in clear text", h.Listen))
		} else {
			e.Warnings = append(e.Warnings, fmt.Sprintf("warning: --listen %s with --insecure-no-auth: anyone who reaches the port reads every process's data", h.Listen))
		}
	}
	return e, nil
}

// command checks what the command's flags give beyond check's rules (a
// zero there is a default; from a flag it was given): the leak watch's
// window, interval and growth, unless it is off (its start-up not judged
// is its window); --cpu-profile's rate and window, with --web; the pause
// log's --info against --warn. It adds the start's warnings to e.
func (c *Config) command(e *Exposure) error {
	if lw := &c.LeakWatch; !lw.Off {
		switch {
		case lw.Window <= 0:
			return fmt.Errorf("--leak-watch-window %v: must be positive", lw.Window)
		case lw.Every <= 0:
			return fmt.Errorf("--leak-watch-every %v: must be positive", lw.Every)
		case !(lw.Growth > 0) || math.IsInf(lw.Growth, 0):
			return fmt.Errorf("--leak-watch-growth %v: a percentage, positive", lw.Growth)
		}
		if lw.Settle == 0 {
			lw.Settle = lw.Window
		}
	}
	if cp := &c.CPUProfile; cp.On {
		switch {
		case !c.Web:
			return errors.New("--cpu-profile feeds the live web view's flame graph: add --web")
		case cp.Hz < 1 || cp.Hz > 1000:
			return fmt.Errorf("--cpu-profile-hz %d: give 1 to 1000 samples per second", cp.Hz)
		case cp.Window < time.Second:
			return fmt.Errorf("--cpu-profile-window %v: give at least 1s", cp.Window)
		}
		if _, err := perf.Check(os.Getpid(), perf.Options{Hz: cp.Hz}); err != nil {
			e.Warnings = append(e.Warnings, fmt.Sprintf("--cpu-profile: %v; processes clrspy may sample get a flame graph, the others not", err))
		}
	}
	if p := c.PauseLog; p != nil && p.Info > p.Warn {
		return fmt.Errorf("--info (%v) must not be longer than --warn (%v)", p.Info, p.Warn)
	}
	// serve starts anyway (a process may get the pid later), but a
	// mistyped pid should not look like a quiet process.
	for _, p := range c.Pids {
		if !procfs.Exists(p) {
			e.Warnings = append(e.Warnings, fmt.Sprintf("warning: --pid %d: no process has this pid now; serve will monitor one that gets it", p))
		}
	}
	return nil
}

// ResolveToken is the token e asks for (TokenNone: ""): file's (a new one
// written when it does not exist), or a new one for this run; notice says
// a new token, once ("": nothing to say).
func (e *Exposure) ResolveToken(file string) (token, notice string, err error) {
	switch e.Token {
	case TokenFromFile:
		tok, created, err := LoadToken(file)
		if err != nil {
			return "", "", err
		}
		if created {
			notice = fmt.Sprintf("wrote a new token to %s: %s", file, tok)
		}
		return tok, notice, nil
	case TokenNew:
		// TLS without a token file: this run's token, printed once.
		tok := NewToken()
		return tok, "no --auth-token-file: this run's token is " + tok, nil
	}
	return "", "", nil
}

// LoopbackName reports whether a listen address's host is the loopback
// interface only: localhost, 127.0.0.0/8 or ::1 (a wildcard, an empty
// host or another name is not: it needs a token).
func LoopbackName(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkSecretFile refuses a secret (the TLS key, the token file) that
// another user could know or choose: a symbolic link owned by another
// user than clrspy's or root (one planted in /tmp; a Kubernetes Secret's
// files are root's links, followed), or a file that is not regular, is
// readable by every user, or is owned by another user than clrspy's or
// root. It returns the path to read (the link's target, resolved).
func checkSecretFile(flag, path string) (string, error) {
	st, err := os.Lstat(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", flag, path, fleet.PlainErr(err))
	}
	real := path
	if st.Mode()&os.ModeSymlink != 0 {
		to, _ := os.Readlink(path)
		if u := fileUID(st); u != 0 && u != os.Geteuid() {
			return "", fmt.Errorf("%s %s: a symbolic link (to %s) owned by uid %d: name the file itself", flag, path, to, u)
		}
		if real, err = filepath.EvalSymlinks(path); err != nil {
			return "", fmt.Errorf("%s %s: %v", flag, path, fleet.PlainErr(err))
		}
		if st, err = os.Lstat(real); err != nil {
			return "", fmt.Errorf("%s %s: %v", flag, path, fleet.PlainErr(err))
		}
	}
	switch {
	case !st.Mode().IsRegular():
		return "", fmt.Errorf("%s %s: not a regular file", flag, path)
	case st.Mode().Perm()&0o004 != 0:
		return "", fmt.Errorf("%s %s: readable by every user (mode %v): chmod 600 it", flag, path, st.Mode().Perm())
	}
	if u := fileUID(st); u != 0 && u != os.Geteuid() {
		return "", fmt.Errorf("%s %s: owned by uid %d, not by clrspy's user (uid %d) or root: that user knows it", flag, path, u, os.Geteuid())
	}
	return real, nil
}

func fileUID(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}

// CPUProfile configures the continuous low-rate CPU profile of every
// target: the perf sampler at Hz samples per second per thread for Window
// (0: 30 s), again and again while the target's session lives. Each
// window is its own perf session (an EventPipe session naming JIT'd code,
// with a rundown at its end), so every window's names are complete.
type CPUProfile struct {
	// On turns the profile on; Hz must then be 1 to 1000.
	On     bool
	Hz     int
	Window time.Duration
}

// Capture configures pause-triggered captures: the window of `clrspy
// record --save-on-pause-over` around every pause longer than Over, per
// target (rearmed: every long pause), written to Dir as
// PROCESS_PID_gcN_TIME.nettrace. MaxFiles and MaxBytes cap the
// directory's captures: the oldest are removed first.
type Capture struct {
	// Before, After: 0: 30 s, 5 s; RingBytes, per target: 0: 32 MiB.
	flightrec.Window
	Dir      string
	MaxFiles int   // 0: 20
	MaxBytes int64 // 0: 1 GiB
}

func (c *Config) cpuWindow() time.Duration { return fleet.Or(c.CPUProfile.Window, 30*time.Second) }

func (c *Config) sampler() string {
	if c.Sampler == "" {
		return "auto"
	}
	return c.Sampler
}

func (c *Capture) defaults() {
	c.Before = fleet.Or(c.Before, 30*time.Second)
	c.After = fleet.Or(c.After, 5*time.Second)
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
	if err := c.Config.Check(); err != nil {
		return err
	}
	switch c.Sampler {
	case "", "auto", "perf", "eventpipe":
	default:
		return fmt.Errorf("unknown --sampler %q: use perf, eventpipe or auto", c.Sampler)
	}
	switch {
	case math.IsNaN(c.SnapshotOnGen2Growth) || math.IsInf(c.SnapshotOnGen2Growth, 0) || c.SnapshotOnGen2Growth < 0:
		return fmt.Errorf("--snapshot-on-gen2-growth %v: a percentage, positive (0: off)", c.SnapshotOnGen2Growth)
	}
	if err := c.LeakWatch.check(); err != nil {
		return err
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
