package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/source"
)

// discovery finds processes to attach to. Only processes it has not seen
// are probed; the socket directories are listed once and then followed
// through inotify, so a steady host costs one /proc listing per scan.
type discovery struct {
	f       *Fleet
	w       *fsnotify.Watcher
	watched map[string]bool            // socket directories watched
	socks   map[string]map[string]bool // directory → dotnet-diagnostic-* names in it
	seen    map[int]*procEntry
	self    int
	myMnt   string
	myPidNs string
	portEnv string // our diagnostic port's path, as a runtime's DOTNET_DiagnosticPorts names it
	// kick receives the pids of new sockets, a little after they appear.
	kick chan int
}

// socketSettle is how long after its socket appears a process is probed:
// the runtime creates the socket file (bind) a moment before it listens,
// and a connection in between is refused.
const socketSettle = 250 * time.Millisecond

// procEntry is what discovery knows of one pid.
type procEntry struct {
	ticks   int64
	state   procState
	checked time.Time
}

type procState uint8

const (
	// pending: in another namespace (or a directory not watched), no
	// socket yet (its runtime may not have started): probed again at each
	// scan while the process is young.
	pending procState = iota + 1
	// waitSocket: in clrspy's namespace, no socket in its watched
	// directory: probed again only when a socket with its pid appears
	// (inotify), so the many short-lived processes of a busy host cost one
	// probe each.
	waitSocket
	ignored // not .NET, left out by --pid/--name, or in listen mode
	handled // given to the daemon (a target, or failed for good)
)

// youngSec is the process age up to which a process without a socket is
// probed again at each scan (a runtime creates its socket within a second
// of starting, slower on a loaded machine).
const youngSec = 30

// maxWatched bounds the socket directories watched (processes with their
// own TMPDIR each add theirs).
const maxWatched = 64

func newDiscovery(f *Fleet) (*discovery, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching for new processes: %w", err)
	}
	disc := &discovery{f: f, w: w, watched: make(map[string]bool), socks: make(map[string]map[string]bool),
		seen: make(map[int]*procEntry), self: os.Getpid(), kick: make(chan int, 256)}
	disc.myMnt, disc.myPidNs = procfs.Namespace(procfs.Self, "mnt"), procfs.Namespace(procfs.Self, "pid")
	disc.portEnv = f.cfg.DiagnosticPort
	dirs := f.cfg.SocketDirs
	if len(dirs) == 0 {
		dirs = []string{"/tmp"}
		if t := os.Getenv("TMPDIR"); t != "" {
			dirs = append(dirs, t)
		}
	}
	for _, dir := range dirs {
		if err := disc.watch(dir); err != nil {
			w.Close()
			return nil, err
		}
	}
	return disc, nil
}

// watch starts following a socket directory and lists it.
func (disc *discovery) watch(dir string) error {
	dir = filepath.Clean(dir)
	if disc.watched[dir] {
		return nil
	}
	if len(disc.watched) >= maxWatched {
		return fmt.Errorf("socket directory %s: already watching %d directories", dir, maxWatched)
	}
	if err := disc.w.Add(dir); err != nil {
		return fmt.Errorf("socket directory %s: %v", dir, PlainErr(err))
	}
	disc.watched[dir] = true
	return disc.list(dir)
}

// list reads a watched directory's sockets afresh.
func (disc *discovery) list(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("socket directory %s: %v", dir, PlainErr(err))
	}
	set := make(map[string]bool)
	for _, e := range ents {
		if isSocketName(e.Name()) {
			set[e.Name()] = true
		}
	}
	disc.socks[dir] = set
	return nil
}

// PlainErr is err without its path or system call (a file's error for a
// line that names the file already).
func PlainErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err
	}
	return err
}

func isSocketName(n string) bool {
	return strings.HasPrefix(n, "dotnet-diagnostic-") && strings.HasSuffix(n, "-socket")
}

// socketPid is the pid in a socket's name (-1: not a socket name).
func socketPid(n string) int {
	if !isSocketName(n) {
		return -1
	}
	rest := strings.TrimPrefix(n, "dotnet-diagnostic-")
	i := strings.IndexByte(rest, '-')
	if i <= 0 {
		return -1
	}
	p, err := strconv.Atoi(rest[:i])
	if err != nil {
		return -1
	}
	return p
}

func (disc *discovery) close() { disc.w.Close() }

// run scans until ctx ends.
func (disc *discovery) run(ctx context.Context) {
	disc.scan()
	tick := time.NewTicker(disc.f.cfg.scanInterval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-disc.w.Events:
			if !ok {
				return
			}
			disc.event(ev)
		case err, ok := <-disc.w.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				for dir := range disc.watched {
					disc.list(dir)
				}
				disc.scan()
			}
		case pid := <-disc.kick:
			if e := disc.seen[pid]; e == nil || e.state != handled {
				disc.probe(pid)
			}
		case <-tick.C:
			disc.scan()
		}
	}
}

// event follows a socket directory's changes; a new socket gets its
// process probed at once.
func (disc *discovery) event(ev fsnotify.Event) {
	dir, name := filepath.Dir(ev.Name), filepath.Base(ev.Name)
	set := disc.socks[dir]
	if set == nil || !isSocketName(name) {
		return
	}
	switch {
	case ev.Has(fsnotify.Create):
		set[name] = true
		if pid := socketPid(name); pid > 0 {
			time.AfterFunc(socketSettle, func() {
				select {
				case disc.kick <- pid:
				default: // the scan will see it
				}
			})
		}
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		delete(set, name)
	}
}

// scan probes the processes not seen before, and young ones still
// without a socket; it forgets the pids that are gone.
func (disc *discovery) scan() {
	var pids []int
	if len(disc.f.cfg.Pids) > 0 && len(disc.f.cfg.Names) == 0 {
		// Only these can match: no need to list /proc.
		pids = disc.f.cfg.Pids
	} else {
		var err error
		if pids, err = procfs.Pids(); err != nil {
			return
		}
	}
	live := make(map[int]bool, len(pids))
	now := time.Now()
	uptime, _ := procfs.Uptime()
	for _, pid := range pids {
		if pid == disc.self {
			continue
		}
		live[pid] = true
		e := disc.seen[pid]
		switch {
		case e == nil:
			disc.probe(pid)
		case e.state == pending && now.Sub(e.checked) >= time.Second && uptime-float64(e.ticks)/procfs.ClockTicks < youngSec:
			disc.probe(pid)
		}
	}
	for pid, e := range disc.seen {
		if !live[pid] {
			delete(disc.seen, pid)
		} else if len(disc.f.cfg.Pids) > 0 && len(disc.f.cfg.Names) == 0 {
			// Listed, not read from /proc: check the pid still names the
			// process seen.
			if t, err := procfs.StartTicks(pid); err != nil || t != e.ticks {
				delete(disc.seen, pid)
			}
		}
	}
}

// probe decides what a process is: pending (no socket yet), ignored, or
// handed to the daemon.
func (disc *discovery) probe(pid int) {
	ticks, err := procfs.StartTicks(pid)
	if err != nil {
		return
	}
	e := disc.seen[pid]
	if e == nil || e.ticks != ticks {
		e = &procEntry{ticks: ticks}
		disc.seen[pid] = e
	}
	if e.state == handled {
		return
	}
	e.checked = time.Now()
	namespaced := procfs.Namespace(pid, "mnt") != disc.myMnt || procfs.Namespace(pid, "pid") != disc.myPidNs
	env, _ := procfs.Environ(pid)
	if disc.portEnv != "" && listensOn(env, disc.portEnv) {
		// Its runtime connects to our diagnostic port: monitored there.
		e.state = ignored
		return
	}
	if !namespaced {
		dir, _ := procfs.EnvValue(env, "TMPDIR")
		if dir == "" {
			dir = "/tmp"
		}
		dir = filepath.Clean(dir)
		if !disc.watched[dir] && disc.watch(dir) != nil {
			// Unwatchable: ask the directory itself.
			if _, err := ipc.Find(pid); err != nil {
				e.state = pending
				return
			}
		} else if !disc.socks[dir][fmt.Sprintf("dotnet-diagnostic-%d-%d-socket", pid, ticks)] {
			e.state = waitSocket
			return
		}
	} else if _, err := ipc.Find(pid); err != nil {
		var ae *ipc.AttachError
		if errors.As(err, &ae) && ae.Kind() == "no_socket" {
			e.state = pending
			return
		}
		// A .NET process clrspy cannot attach to (another user's): the
		// daemon counts why, once.
	}
	name := processName(pid)
	if !disc.f.matches([]int{pid}, name, func(n string) bool { return ipc.NameMatches(pid, n) }) {
		e.state = ignored
		return
	}
	e.state = handled
	disc.f.attach(pid, ticks, name)
}

// listensOn reports whether an environment block's DOTNET_DiagnosticPorts
// (or COMPlus_) names path.
func listensOn(env []byte, path string) bool {
	for _, k := range []string{"DOTNET_DiagnosticPorts", "COMPlus_DiagnosticPorts"} {
		v, _ := procfs.EnvValue(env, k)
		for _, port := range strings.Split(v, ";") {
			addr, _, _ := strings.Cut(port, ",")
			if addr != "" && filepath.Clean(addr) == filepath.Clean(path) {
				return true
			}
		}
	}
	return false
}

// attach starts monitoring a discovered process.
func (f *Fleet) attach(pid int, ticks int64, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ctx == nil || f.ctx.Err() != nil {
		return
	}
	for _, o := range f.targets {
		if o.kind == source.Listen && o.hostPid == pid && o.endedAt.IsZero() {
			return // connected to the diagnostic port already
		}
	}
	key := fmt.Sprintf("attach:%d:%d", pid, ticks)
	if f.targets[key] != nil {
		return
	}
	t := &Source{f: f, key: key, kind: source.Attach, pid: pid, hostPid: pid, ticks: ticks, name: name, pidLabel: strconv.Itoa(pid)}
	f.startLocked(t)
}

// processName is the process label of an attached process: its name
// (/proc/PID/comm), or for "dotnet app.dll" the app's.
func processName(pid int) string {
	n := source.ProcName(pid)
	if n != "dotnet" {
		return n
	}
	f := strings.Fields(procfs.Cmdline(pid))
	for _, a := range f[min(1, len(f)):] {
		if strings.HasSuffix(a, ".dll") {
			return strings.TrimSuffix(filepath.Base(a), ".dll")
		}
	}
	return n
}
