package capture

import (
	"context"
	"errors"
	"fmt"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/locks"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// UsePerf resolves a live CPU profile's sampler ("perf", "eventpipe" or
// "auto") for the process pid names in clrspy's pid namespace (0: not
// visible here): perf when asked, or with auto when the kernel permits it
// for the process; off-CPU time comes from perf alone, so auto with
// opts.OffCPU is perf. why is auto's reason for the runtime's sampler
// (nil otherwise); err refuses perf asked and not to be had.
func UsePerf(sampler string, pid int, opts perf.Options) (use bool, why, err error) {
	if sampler == "eventpipe" {
		return false, nil, nil
	}
	if opts.OffCPU {
		sampler = "perf"
	}
	if pid <= 0 {
		if sampler == "perf" {
			return false, nil, errors.New("the perf sampler needs the process in clrspy's pid namespace")
		}
		return false, errors.New("the process is not in clrspy's pid namespace"), nil
	}
	if _, err := perf.Check(pid, opts); err != nil {
		if sampler == "perf" {
			return false, nil, err
		}
		return false, err, nil
	}
	return true, nil, nil
}

// Perf is perf_event's sampler run beside an open stream of the same
// process: its builder takes the stream's events (GC labels) and names
// managed code from a symbol table the same stream fills.
type Perf struct {
	s       *perf.Sampler
	b       *perf.Builder
	cancel  context.CancelFunc
	done    chan error
	perfMap *ipc.Client // the runtime's perf map was enabled through it
}

// StartPerf opens the sampler on st's process (visible in clrspy's pid
// namespace: Stream.ProcPid, never a listen-mode runtime's advertised
// pid) and starts it; sym is the symbol table st feeds. With
// perfMap it asks the runtime (.NET 8+) for /tmp/perf-PID.map too, and
// tells notice when it cannot. Feed Analyzer to st, then Stop once st has
// ended.
func StartPerf(st *source.Stream, sym *stacks.Symbols, opts perf.Options, perfMap bool, notice func(string)) (*Perf, error) {
	pid := st.ProcPid()
	if pid <= 0 {
		return nil, errors.New("the perf sampler needs the process in clrspy's pid namespace")
	}
	s, err := perf.Open(pid, opts)
	if err != nil {
		return nil, err
	}
	// Without off-CPU events the profile's notes say why
	// (Sampler.OffCPUNotes).
	b, err := perf.NewBuilder(pid, st.Header(), sym, perf.BuilderOptions{Hz: opts.Hz, Cycles: opts.Event == "cycles", OffCPU: s.Access().OffCPU})
	if err != nil {
		s.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Perf{s: s, b: b, cancel: cancel, done: make(chan error, 1)}
	if perfMap {
		if c, err := ipc.Dial(st.Pid); err == nil {
			if err := c.EnablePerfMap(ipc.PerfMapPerfMap); err == nil {
				p.perfMap = c
			} else if notice != nil {
				notice(fmt.Sprintf("--perf-map: %v", err))
			}
		}
	}
	go func() { p.done <- s.Run(ctx, b.Sample) }()
	return p, nil
}

// Analyzer is what the stream feeds (the builder: GC labels, names).
func (p *Perf) Analyzer() analysis.Analyzer { return p.b }

// Stop ends the sampler once the stream has ended and returns its
// profile, the samples the kernel lost counted and off-CPU's notes added;
// runErr is the sampler's own failure (the profile holds what it took).
func (p *Perf) Stop() (prof *stacks.Profile, runErr error) {
	p.cancel()
	if err := <-p.done; err != nil && !errors.Is(err, context.Canceled) {
		runErr = err
	}
	stats := p.s.Stats()
	p.s.Close()
	p.b.Finish()
	prof = p.b.Result()
	p.b.Close()
	if p.perfMap != nil {
		p.perfMap.DisablePerfMap()
	}
	if prof.Lost == 0 {
		prof.Lost = int64(stats.Lost)
	}
	prof.Notes = append(prof.Notes, p.s.OffCPUNotes()...)
	return prof, runErr
}

// PerfProfile is perf_event's CPU profile of st's process (visible in
// clrspy's pid namespace), sampled beside st until st ends: st is a live
// session of perf.SessionProviders its caller opened (`clrspy profile
// --sampler perf`, serve's /debug/pprof/profile and its CPU windows),
// whose events name managed code and mark GC stops. A failure of the
// sampler's own after it started is the error, with the profile of what
// it took.
func PerfProfile(st *source.Stream, opts perf.Options) (*stacks.Profile, error) {
	syms := stacks.NewSymbols(st.Header())
	ps, err := StartPerf(st, syms, opts, false, nil)
	if err != nil {
		st.Stop()
		return nil, err
	}
	_, err = st.Run(syms, ps.Analyzer())
	p, runErr := ps.Stop()
	if err == nil {
		err = runErr
	}
	return p, err
}

// ProfileSpec is the EventPipe CPU profile in its Set: it reads the
// sampler's samples and the method and module events of its own symbol
// table (stacks.Wants); a live session takes the sample profiler, and the
// method/module events so methods jitted while recording are named
// (rundown names the rest).
var ProfileSpec = analysis.Spec{Name: "stacks", Keep: stacks.Wants, Enable: []func(*nettrace.Metadata) bool{}, Providers: stacks.SamplerProviders()}

// CPUProfile is a CPU profile from the runtime's sample profiler on a
// stream (a live session or a trace file), its threads named from /proc
// while a live one runs.
type CPUProfile struct {
	set  *analysis.Set
	ref  *analysis.Ref[*stacks.Builder]
	proc *source.ProcWatcher
}

// NewCPUProfile makes the profile's Set; opts are read when the Set
// starts.
func NewCPUProfile(opts *stacks.Options) *CPUProfile {
	p := &CPUProfile{set: analysis.NewSet()}
	p.ref = analysis.Add(p.set, ProfileSpec, func(h *nettrace.Header) *stacks.Builder { return stacks.New(h, *opts) })
	return p
}

// Set is what the stream runs (its Providers: the session's).
func (p *CPUProfile) Set() *analysis.Set { return p.set }

// Watch reads the threads' names and the mapped files of procPid (the
// process in clrspy's pid namespace) while the stream runs: events carry
// no thread names. Call it once the stream is open (0: nothing to watch).
func (p *CPUProfile) Watch(procPid int) {
	if procPid > 0 {
		p.proc = source.WatchProc(procPid)
	}
}

// Builder is the profile's builder once the Set started.
func (p *CPUProfile) Builder() *stacks.Builder { return p.ref.Get() }

// Result is the profile once the stream has ended, with the mapped files
// and the threads' names the watch saw.
func (p *CPUProfile) Result() *stacks.Profile {
	b := p.ref.Get()
	if p.proc != nil {
		b.SetImageNamer(p.proc.ImageNames)
	}
	names := p.proc.Finish(b.SetMappings)
	prof := b.Result()
	if names != nil {
		for i := range prof.Threads {
			prof.Threads[i].Name = names[prof.Threads[i].ID]
		}
	}
	return prof
}

// Locks is the lock analysis after its symbol table (method and module
// events name the waiting stacks): it reads the contention events and
// the thread events that map owners to OS threads, and names the
// threads from /proc while a live stream runs.
type Locks struct {
	set  *analysis.Set
	ref  *analysis.Ref[*locks.Analyzer]
	proc *source.ProcWatcher
	nm   *cdac.Namer
}

// NewLocks makes the lock analysis's Set. objectTypes adds the first
// allocation of every type (and a time-based sample after it) with the
// type's name, so a lock's object can be matched by address. The runtime
// names types in BulkType only when GCHeapAndTypeNames is on; it forces
// no GC by itself.
func NewLocks(objectTypes bool) *Locks {
	var ps []ipc.Provider
	if objectTypes {
		ps = clrevents.ProvidersFor(locks.WantsObjectNames)
		// GCHeapAndTypeNames is no event's keyword: it makes BulkType carry
		// the types' names, so no Wants can ask for it.
		ps[0].Keywords |= ipc.KeywordGCHeapAndTypeNames
	}
	l := &Locks{set: analysis.NewSet()}
	sym := stacks.SymbolsIn(l.set)
	l.ref = analysis.Add(l.set, analysis.Spec{Name: "locks", Keep: locks.Wants, Enable: []func(*nettrace.Metadata) bool{locks.WantsContention}, Providers: ps},
		func(h *nettrace.Header) *locks.Analyzer { return locks.New(h, locks.Options{Symbols: sym.Get()}) })
	return l
}

// Set is what the stream runs (its Providers: the session's).
func (l *Locks) Set() *analysis.Set { return l.set }

// Watch reads the threads' names and native modules of procPid while the
// stream runs (0: nothing to watch).
func (l *Locks) Watch(procPid int) {
	if procPid > 0 {
		l.proc = source.WatchProc(procPid)
	}
}

// NameTypes names the locks' object types from the memory of the live
// process pid (.NET 9+: the runtime's data contract descriptor), as their
// contention begins and at the end. Call it once the Set started.
func (l *Locks) NameTypes(pid int) {
	if pid > 0 && procfs.Exists(pid) {
		l.nm = cdac.NewNamer(pid)
		l.ref.Get().SetObjectTypes(l.nm.Names)
	}
}

// Result is the analysis's result once the stream has ended, its threads
// named from the watch. Call it only once the Set started.
func (l *Locks) Result() *locks.Result {
	if l.proc != nil {
		stacks.SymbolsIn(l.set).Get().SetImageNamer(l.proc.ImageNames)
	}
	names := l.proc.Finish(stacks.SymbolsIn(l.set).Get().SetMappings)
	res := l.ref.Get().Result()
	if l.nm != nil {
		l.nm.Close()
	}
	if names != nil {
		res.NameThreads(func(tid uint64) string { return names[tid] })
	}
	return res
}
