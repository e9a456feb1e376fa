package perf

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Probes defined once in tracefs (uprobe_events), as perf probe defines
// them, rather than by the uprobe PMU: every perf_event_open of the PMU
// makes a uprobe consumer of its own, and each trap of the function runs
// every consumer, one per followed thread (each then filters by task). A
// tracefs probe is one consumer whatever the number of threads, each
// thread's perf event a filter entry of it. Measured on the nativechurn
// workload at 20 k malloc/free pairs a second, 9 threads, 2-CPU VM: 9.0
// µs of the target's CPU a pair through the PMU, 4.3 µs through tracefs
// (perf record on the same events: 4.3 µs). Tracefs needs root (its files
// are root's); without it the PMU is used.

// tracefsDirs are where tracefs may be mounted (a variable for tests).
var tracefsDirs = []string{"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}

// tracefsProbes are one tracer's probe events in tracefs: a group of its
// own, an event per allocProbes entry.
type tracefsProbes struct {
	dir   string // tracefs
	group string
	names []string
	ids   []uint64 // the events' tracepoint ids, by allocProbes index
}

// makeTracefsProbes defines the probes at offs of libc (the path the
// kernel opens) in a group named after clrspy's and the target's pids.
func makeTracefsProbes(libc string, offs []uint64, pid int) (*tracefsProbes, error) {
	dir := ""
	for _, d := range tracefsDirs {
		if _, err := os.Stat(filepath.Join(d, "uprobe_events")); err == nil {
			dir = d
			break
		}
	}
	if dir == "" {
		return nil, fmt.Errorf("no tracefs with uprobe_events under %s", strings.Join(tracefsDirs, " or "))
	}
	if strings.ContainsAny(libc, " \t\n") {
		return nil, fmt.Errorf("%q: a path with spaces cannot be given to uprobe_events", libc)
	}
	p := &tracefsProbes{dir: dir, group: fmt.Sprintf("clrspy_%d_%d", os.Getpid(), pid)}
	var defs []string
	for i, pr := range allocProbes {
		name, kind := pr.sym, "p"
		if pr.ret {
			name, kind = pr.sym+"_ret", "r"
		}
		p.names = append(p.names, name)
		defs = append(defs, fmt.Sprintf("%s:%s/%s %s:%#x", kind, p.group, name, libc, offs[i]))
	}
	p.remove() // a previous run's under the same pids
	for _, def := range defs {
		if err := p.write(def); err != nil {
			p.remove()
			return nil, err
		}
	}
	for _, name := range p.names {
		b, err := os.ReadFile(filepath.Join(dir, "events", p.group, name, "id"))
		if err != nil {
			p.remove()
			return nil, fmt.Errorf("tracefs: %w", err)
		}
		id, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			p.remove()
			return nil, fmt.Errorf("tracefs: %s/%s id %q", p.group, name, b)
		}
		p.ids = append(p.ids, id)
	}
	return p, nil
}

// write appends one definition to uprobe_events (never truncating it:
// that would remove every other tool's probes).
func (p *tracefsProbes) write(def string) error {
	f, err := os.OpenFile(filepath.Join(p.dir, "uprobe_events"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("tracefs: %w", err)
	}
	_, err = f.WriteString(def + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("tracefs: %q: %w", def, err)
	}
	return nil
}

// remove deletes the group's events (each once no perf event holds it).
func (p *tracefsProbes) remove() {
	for _, name := range p.names {
		if _, err := os.Stat(filepath.Join(p.dir, "events", p.group, name)); err == nil {
			p.write("-:" + p.group + "/" + name)
		}
	}
}
