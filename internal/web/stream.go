package web

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/internal/cdac"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// StreamOptions configure a StreamHub. Every field is optional.
type StreamOptions struct {
	// Interval is how often subscribers get an update (default 250 ms).
	Interval time.Duration
	// CPUWindow is the span of the live flame graph (default 10 s), sent
	// every CPUEvery (default 2 s) while samples arrive.
	CPUWindow, CPUEvery time.Duration
	// MaxRows bounds the GC and suspension rows kept for new subscribers
	// (default 50,000 each; the oldest go first).
	MaxRows int
}

// StreamHub is a Monitors of one target: a source.Stream followed by a
// monitor.Monitor in process (clrspy report --live, the tests), the one
// target of a static fleet. Create it with NewStreamHub, serve
// Handler(hub.Monitors, ...) and call Run.
type StreamHub struct {
	*Monitors
	st   *source.Stream
	sess *fleet.Session
	mon  *monitor.Monitor
	proc *source.ProcWatcher // a live target's mappings name native frames
}

// NewStreamHub prepares a hub for st (opened, not yet read).
func NewStreamHub(st *source.Stream, o StreamOptions) *StreamHub {
	f := fleet.Static()
	ms := NewMonitors(f, MonitorsOptions{Interval: o.Interval, CPUEvery: o.CPUEvery, MaxRows: o.MaxRows})
	// Every section the page has: the thread pool and the exceptions as
	// a file's page shows them (the stream's providers are the page's).
	opts := monitor.Options{CPU: true, Locks: true, CPUWindow: o.CPUWindow, TopLocks: 100, NoCounters: true,
		Exceptions: true, ThreadPool: true, Requests: true}
	var proc *source.ProcWatcher
	if st.Live() {
		proc = source.WatchProc(st.Pid)
		opts.Mappings = proc.Mappings
		opts.ImageNames = proc.ImageNames
		// Lock objects' types from the target's memory (.NET 9+); its
		// file is open while the page is.
		opts.ObjectTypes = cdac.NewNamer(st.Pid).Names
	}
	sess, _ := f.Add(fleet.Target{Name: st.Name, Pid: st.Pid}).Follow(st, opts)
	return &StreamHub{Monitors: ms, st: st, sess: sess, mon: sess.Monitor(), proc: proc}
}

// Analyzers is the hub's one analysis, the monitor.
func (h *StreamHub) Analyzers() []analysis.Analyzer { return []analysis.Analyzer{h.mon} }

// Run reads the stream to its end through the monitor, then sends the
// last update. It returns what the stream's end said (a cut stream is not
// an error).
func (h *StreamHub) Run() (analysis.End, error) {
	if h.st.Live() {
		// An attached target's methods compiled before the session are
		// named by a second session's rundown, not only at the end.
		go h.st.Rundown(stacks.SymbolProviders(), h.mon.SymbolEvent)
	}
	end, err := h.mon.Run(context.Background(), h.st)
	if h.proc != nil {
		h.proc.Stop()
	}
	h.sess.Ended()
	h.Close()
	return end, err
}

// Serve serves the hub's page (Handler with o) on ln in the background
// until the returned function is called; that one shuts the server down,
// giving open requests up to two seconds.
func (h *StreamHub) Serve(ln net.Listener, o Options) (shutdown func()) {
	srv := &http.Server{Handler: Handler(h.Monitors, o), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(ctx)
		cancel()
	}
}

// Page is the final page, once Run returned (nil before).
func (h *StreamHub) Page() *report.Page {
	t := pageOf(h.sess)
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.page
}
