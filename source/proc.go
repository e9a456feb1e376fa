package source

import (
	"maps"
	"sync"
	"time"

	"github.com/clrspy/clrspy/clrmeta"
	"github.com/clrspy/clrspy/internal/procfs"
)

// ProcWatcher collects what a live target's events do not carry: thread
// names (read while the threads live: a thread that exited before the
// report is otherwise nameless) and file mappings (to name addresses
// outside known methods).
type ProcWatcher struct {
	pid   int
	mu    sync.Mutex
	names map[uint64]string
	maps  []procfs.Mapping
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	r2r   *clrmeta.R2RNamer
}

// maxThreadNames bounds the names kept for a process that creates threads
// without end: past it the table starts over with the threads alive now.
const maxThreadNames = 1 << 16

// WatchProc starts watching pid: thread names every 500 ms, mappings every
// 2 s. Stop ends it after a last look.
func WatchProc(pid int) *ProcWatcher {
	w := &ProcWatcher{pid: pid, names: make(map[uint64]string), stop: make(chan struct{}), done: make(chan struct{}),
		r2r: clrmeta.NewR2RNamer(pid)}
	if pid <= 0 {
		close(w.done)
		return w
	}
	w.scan()
	w.scanMaps()
	go func() {
		defer close(w.done)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			select {
			case <-tick.C:
				w.scan()
				if n%4 == 0 {
					w.scanMaps()
				}
			case <-w.stop:
				return
			}
		}
	}()
	return w
}

func (w *ProcWatcher) scan() {
	tids, err := procfs.Threads(w.pid)
	if err != nil {
		return
	}
	for _, tid := range tids {
		name := procfs.Comm(w.pid, tid)
		if name == "" {
			continue
		}
		w.mu.Lock()
		if len(w.names) >= maxThreadNames {
			clear(w.names)
		}
		w.names[tid] = name
		w.mu.Unlock()
	}
}

func (w *ProcWatcher) scanMaps() {
	ms, err := procfs.Maps(w.pid)
	if err != nil {
		return
	}
	w.mu.Lock()
	w.maps = ms
	w.mu.Unlock()
}

// Stop ends the watch after a last look at the process.
func (w *ProcWatcher) Stop() {
	w.once.Do(func() {
		if w.pid > 0 {
			close(w.stop)
			<-w.done
			w.scan()
			w.scanMaps()
		}
	})
}

// ThreadNames is a copy of every thread name seen.
func (w *ProcWatcher) ThreadNames() map[uint64]string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make(map[uint64]string, len(w.names))
	maps.Copy(out, w.names)
	return out
}

// Mappings is the latest file-mapping list.
func (w *ProcWatcher) Mappings() []procfs.Mapping {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maps
}

// ImageNames names the precompiled (ReadyToRun) method at file offset off
// of the target's module file path, "" when none is known: a symbol
// table's image namer (stacks.Symbols.SetImageNamer). A nil watch names
// nothing.
func (w *ProcWatcher) ImageNames(path string, off uint64) string {
	if w == nil {
		return ""
	}
	return w.r2r.Name(path, off)
}

// Finish stops the watch and hands its latest file mappings to
// setMappings (a symbol table's or a profile builder's SetMappings); it
// returns the thread names seen. A nil watch (no live process to watch)
// does nothing and returns nil.
func (w *ProcWatcher) Finish(setMappings func([]procfs.Mapping)) map[uint64]string {
	if w == nil {
		return nil
	}
	w.Stop()
	setMappings(w.Mappings())
	return w.ThreadNames()
}
