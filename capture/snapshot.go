package capture

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/heapgraph"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
)

// SnapshotProviders: the heap-dump keywords alone (dotnet-gcdump's set);
// the stop-time rundown names the methods whose frames root objects.
func SnapshotProviders() []ipc.Provider { return heapgraph.SessionProviders() }

// SnapshotBufferMB is a snapshot session's runtime-side buffer: the heap
// dump is one burst of events as large as the heap's graph, and a reader
// that falls behind must lose nothing (dotnet-gcdump's buffer). The
// runtime fills it on demand: a small heap costs little of it.
const SnapshotBufferMB = 1024

// SnapshotTimeout bounds a live snapshot's session: the heap dump's GC
// must have ended by then.
const SnapshotTimeout = time.Minute

// Memory is where a snapshot's graph arrays (about 60 bytes per object;
// mapped, a large graph keeps about 30 resident at its peak: heapgraph's
// parking) live.
type Memory struct {
	// Mapped puts them outside the Go heap, each freed when its phase
	// ends (at exit at the latest: one snapshot per process, the
	// command's), spilling to unlinked temporary files in $TMPDIR when
	// the graph would not fit; the stream's pages go back to the system
	// as soon as it closes. Otherwise they are Go arrays (a daemon's
	// snapshots, one after another).
	Mapped bool
	// Budget (with Mapped; 0: none) always spills and keeps the
	// resident memory near it (--max-memory).
	Budget int64
}

// Snapshot is one heap snapshot on a stream: the pause analysis, which
// pairs the dump GC's stop (the snapshot's pause, analysis.Stopped) and
// marks the GC the runtime described the heap in, then the graph's
// builder.
type Snapshot struct {
	set    *analysis.Set
	ref    *analysis.Ref[*heapgraph.Builder]
	b      *heapgraph.Builder
	mem    Memory
	dumpGC uint32
}

// NewSnapshot makes the job's Set; stop (nil for a file) is called once
// the dump's GC has ended, to stop a live session (the rundown that names
// stack roots' methods still arrives).
func NewSnapshot(stop func()) *Snapshot {
	s := &Snapshot{set: analysis.NewSet()}
	gcpause.In(s.set, gcpause.Options{MaxGCs: 1, MaxSuspensions: 1, OnGC: func(g *gcpause.GC) {
		if g.HeapDump && s.dumpGC == 0 {
			s.dumpGC = g.Number
		}
	}})
	s.ref = analysis.Add(s.set, heapgraph.Spec, func(h *nettrace.Header) *heapgraph.Builder {
		return heapgraph.NewBuilder(h, stop)
	})
	return s
}

// Set is what the stream runs (its Keep: what a file's reader keeps).
func (s *Snapshot) Set() *analysis.Set { return s.set }

// Start starts the Set on the stream's header before its events, with
// the graph's memory policy and the type names earlier snapshots of the
// process saw (known, nil: none; heapgraph.Builder.KnownTypes), and
// returns the builder.
func (s *Snapshot) Start(h *nettrace.Header, m Memory, known map[uint64]string) *heapgraph.Builder {
	s.set.Start(h)
	s.b, s.mem = s.ref.Get(), m
	if m.Mapped {
		s.b.MapArrays(m.Budget > 0, "", m.Budget)
	}
	if known != nil {
		s.b.KnownTypes(known)
	}
	return s.b
}

// DumpGC is the number of the GC the runtime described the heap in (0:
// none seen): the snapshot's own, which a monitor keeps out of the
// application's induced GCs.
func (s *Snapshot) DumpGC() uint32 { return s.dumpGC }

// Graph builds the graph once st has ended: st is closed first (its
// buffers go before the graph's arrays come), static roots are named by
// class from the modules' metadata read through procPid's root (0: the
// paths as given: a file, or a process not visible here), and with a
// Mapped memory the freed pages go back to the system now, not when the
// scavenger gets to them. phase, when given, is told "stream closed"
// before the graph is built.
func (s *Snapshot) Graph(st *source.Stream, procPid int, phase func(string)) (*heapgraph.Graph, error) {
	st.Close()
	s.b.NameStatics(clrmeta.Reader(procPid))
	if s.mem.Mapped {
		debug.FreeOSMemory()
	}
	if phase != nil {
		phase("stream closed")
	}
	return s.b.Graph()
}

// IsGCDumpName says whether path names a .gcdump file by its extension.
func IsGCDumpName(path string) bool { return strings.EqualFold(filepath.Ext(path), ".gcdump") }

// ReadGCDump reads a .gcdump file (path "-": stdin) into a graph, its
// arrays bounded by budget (0: none; heapgraph.ReadGCDumpFile), static
// roots named by class from the modules' metadata.
func ReadGCDump(path string, stdin io.Reader, budget int64) (report.Input, *heapgraph.Graph, error) {
	var g *heapgraph.Graph
	var err error
	if path == "-" {
		g, err = heapgraph.ReadGCDump(stdin)
	} else {
		f, oerr := os.Open(path)
		if oerr != nil {
			return report.Input{}, nil, oerr
		}
		defer f.Close()
		g, err = heapgraph.ReadGCDumpFile(f, budget)
	}
	if err != nil {
		return report.Input{}, nil, fmt.Errorf("%s: %w", path, err)
	}
	// dotnet-gcdump's static roots are named by their object's type:
	// the class from the modules the file names, when they are here.
	g.NameStatics(clrmeta.Reader(0))
	src := path
	if path == "-" {
		src = "stdin"
	}
	return report.Input{Source: src, Complete: true}, g, nil
}

// ReadSnapshotFile builds the graph of a .gcdump (gcdump true) or of the
// heap dump a trace file holds (path "-": stdin), the trace decoded on
// threads goroutines, with a mapped memory bounded by budget (0: none).
// A .gcdump records no time: the tools write it as the dump ends, so its
// modification time is when it was taken.
func ReadSnapshotFile(path string, stdin io.Reader, gcdump bool, threads int, budget int64) (report.Input, *heapgraph.Graph, error) {
	if gcdump {
		in, g, err := ReadGCDump(path, stdin, budget)
		if err == nil && g.Taken.IsZero() && path != "-" {
			if fi, serr := os.Stat(path); serr == nil {
				g.Taken, g.TakenFrom = fi.ModTime().UTC(), "file_mtime"
			}
		}
		return in, g, err
	}
	job := NewSnapshot(nil)
	st, err := source.Open(source.Spec{File: path, Stdin: stdin, Threads: threads, Keep: job.Set().Keep()})
	if err != nil {
		return report.Input{}, nil, err
	}
	defer st.Close()
	job.Start(st.Header(), Memory{Mapped: true, Budget: budget}, nil)
	end, err := st.Run(job.Set())
	in := report.NewInput(st.Name, st.Live(), end, job.Set().Stats())
	if err != nil {
		return in, nil, err
	}
	g, err := job.Graph(st, 0, nil)
	if err != nil {
		return in, nil, fmt.Errorf("%s: %w", path, err)
	}
	return in, g, nil
}
