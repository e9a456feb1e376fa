package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/capture"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/metrics"
	"github.com/clrspy/clrspy/internal/web"
	"github.com/clrspy/clrspy/perf"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/source"
	"github.com/clrspy/clrspy/stacks"
)

// HandlerOptions configure the daemon's HTTP handler.
type HandlerOptions struct {
	// Registry is what /metrics serves (nil: the daemon's collector alone).
	Registry *prometheus.Registry
	// Web, when set, is the live web view's handler (package web; nil:
	// the daemon's own with Config.Web), served
	// at the root: the page at / (to a client that accepts HTML; others
	// still get the list of endpoints) and /index.html, its target list
	// /targets.json and its websocket /ws.
	Web http.Handler
	// MaxProfile bounds a profile's seconds (0: 5 min).
	MaxProfile time.Duration
	// Token, when set, is required on every endpoint but /healthz, as
	// "Authorization: Bearer TOKEN" (or Basic auth with it as the
	// password, as a browser sends it): 401 otherwise.
	Token string
	// LoopbackHosts answers only requests whose Host names the loopback
	// interface (421 otherwise): set it when listening on loopback, so a
	// DNS-rebinding page cannot read the endpoints or open the websocket.
	LoopbackHosts bool
	// HeapEvery and ProfileEvery are the rate limits of one target's heap
	// snapshots and of its profiles (CPU and contention): a request within
	// that long of the end of the last one gets 429 with Retry-After (0:
	// DefaultHeapEvery, DefaultProfileEvery; negative: no limit).
	HeapEvery, ProfileEvery time.Duration
	// PeerUsers identifies the user of each connection by the kernel (a
	// loopback TCP peer's socket owner): clrspy's user and root read
	// everything; another user only its own processes (403 otherwise).
	// Set it on a loopback listener without a token.
	PeerUsers bool
}

// The default rate limits: a heap snapshot pauses the target (a blocking
// gen2 GC and the walk), so at most one starts within 10 s of the last
// one's end; a profile costs it CPU, and the next starts at least 1 s
// after.
const (
	DefaultHeapEvery    = 10 * time.Second
	DefaultProfileEvery = time.Second
)

func limit(v, def time.Duration) time.Duration {
	switch {
	case v < 0:
		return 0
	case v == 0:
		return def
	}
	return v
}

// Handler serves the daemon's read-only endpoints.
func (d *Daemon) Handler(o HandlerOptions) (http.Handler, error) {
	reg := o.Registry
	if reg == nil {
		var err error
		if reg, err = metrics.NewRegistry(d.fleet, metrics.Options{}); err != nil {
			return nil, err
		}
	}
	if o.Web == nil && d.live != nil {
		o.Web = web.Handler(d.live, web.Options{Title: "clrspy serve", MaxClients: d.cfg.HTTP.MaxWebClients})
	}
	maxProfile := fleet.Or(o.MaxProfile, 5*time.Minute)
	mux := http.NewServeMux()
	mux.Handle("/metrics", metrics.Handler(reg))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/targets", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		list := d.List()
		if uid, ok := restrictedUID(r); ok {
			list = slices.DeleteFunc(list, func(ti TargetInfo) bool { return ti.Owner != uid })
		}
		enc.Encode(list)
	})
	profileEvery, heapEvery := limit(o.ProfileEvery, DefaultProfileEvery), limit(o.HeapEvery, DefaultHeapEvery)
	mux.HandleFunc("/debug/pprof/profile", d.profileHandler("cpu", maxProfile, profileEvery))
	mux.HandleFunc("/debug/pprof/contention", d.profileHandler("contention", maxProfile, profileEvery))
	mux.HandleFunc("/triage", d.triageHandler(maxProfile))
	mux.HandleFunc("/debug/pprof/heap", d.heapHandler(heapEvery))
	mux.HandleFunc("/debug/stacks", d.stacksHandler(profileEvery))
	if o.Web != nil {
		for _, p := range []string{"/index.html", "/targets.json", "/ws"} {
			mux.Handle(p, o.Web)
		}
	}
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		// A browser gets the live view; curl the endpoints.
		if o.Web != nil && strings.Contains(r.Header.Get("Accept"), "text/html") {
			o.Web.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, `clrspy serve
/metrics                                    Prometheus / OpenMetrics
/healthz                                    liveness
/targets                                    monitored processes (JSON)
/debug/pprof/profile?pid=N&seconds=S        CPU profile of one process (pprof)
/debug/pprof/contention?pid=N&seconds=S     lock contention profile of one process (pprof)
/triage?pid=N&seconds=S                     findings of one process over S s (JSON; format=text)
/debug/pprof/heap?pid=N                     heap snapshot of one process (pprof, retention paths);
                                            induces a blocking gen2 GC in the process
/debug/stacks?pid=N                         every thread now: stack, wait, groups, deadlocks
                                            (JSON, as clrspy stacks --json; format=text)
`)
		if o.Web != nil {
			fmt.Fprintln(w, "/ (in a browser)                            live web view")
		}
	})
	return guard(readOnly(mux), o), nil
}

// readOnly refuses every method but GET and HEAD.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read-only: GET or HEAD", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// profileHandler serves a pprof profile of one target, taken by a second
// session for the seconds asked (30 by default, as Go's handler).
func (d *Daemon) profileHandler(kind string, maxDur, every time.Duration) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		p, err := queryParams(r)
		var pid, sampler string
		var span time.Duration
		var offCPU, offGiven bool
		if err == nil {
			pid, err = p.pid()
		}
		if err == nil {
			span, err = p.seconds(30*time.Second, maxDur)
		}
		if err == nil {
			sampler, err = p.word("sampler", d.cfg.sampler(), "auto", "perf", "eventpipe")
		}
		if err == nil {
			// off_cpu=1: a wall-clock profile, time off the CPU weighed
			// by where threads blocked (perf sampler only).
			offCPU, offGiven, err = p.flag("off_cpu")
			if offGiven && (err != nil || kind != "cpu" || offCPU && sampler == "eventpipe") {
				err = badParam(fmt.Sprintf("off_cpu=%s: want 1 or 0, on /debug/pprof/profile with the perf sampler", p.q.Get("off_cpu")))
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		span = min(span, maxDur)
		// The profile streams for its seconds.
		t, release := d.claim(w, r, pid, "a profile", span, every, func(t *target) *slot { return &t.profiling })
		if t == nil {
			return
		}
		defer release()
		b, err := d.profile(r.Context(), t, kind, sampler, span, offCPU)
		if err != nil {
			http.Error(w, fmt.Sprintf("pid %s: %v", pid, err), http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-%s.pb.gz"`, kind, pid))
		w.Write(b)
	}
}

// profile takes a profile of t: a session of its own for dur (cut short
// when ctx ends), read through the job the CLI runs (package capture),
// written as gzipped pprof. A CPU profile comes from the perf_event
// sampler when sampler allows it and the kernel permits it for the
// process (as `clrspy profile --sampler auto`), else from the runtime's
// sample profiler. The contention profile is `clrspy locks`'s, its
// threads named from /proc.
func (d *Daemon) profile(ctx context.Context, t *target, kind, sampler string, dur time.Duration, offCPU bool) ([]byte, error) {
	if dur <= 0 {
		// A session's zero duration is "until stopped": never from here.
		return nil, errors.New("a profile needs a positive duration")
	}
	var set *analysis.Set
	var cpu *capture.CPUProfile
	var lk *capture.Locks
	if kind == "cpu" {
		if p, ok, err := d.perfProfile(ctx, t, sampler, dur, offCPU); ok {
			if err != nil {
				return nil, err
			}
			var buf bytes.Buffer
			err := report.WritePprof(&buf, p)
			return buf.Bytes(), err
		}
		cpu = capture.NewCPUProfile(&stacks.Options{})
		set = cpu.Set()
	} else {
		lk = capture.NewLocks(false)
		set = lk.Set()
	}
	st, err := t.Open(source.Spec{Providers: set.Providers(), BufferMB: d.cfg.BufferSize(), Duration: dur})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// Cancelling ctx stops the session; the stream then ends.
	defer context.AfterFunc(ctx, st.Stop)()
	hdr := st.Header()
	set.Start(hdr)
	var buf bytes.Buffer
	if cpu != nil {
		cpu.Watch(t.HostPid())
		_, err := st.Run(set)
		p := cpu.Result()
		if err != nil {
			return nil, err
		}
		if p.Total == 0 {
			return nil, errors.New("no stack samples arrived")
		}
		err = report.WritePprof(&buf, p)
		return buf.Bytes(), err
	}
	lk.Watch(t.HostPid())
	lk.NameTypes(t.HostPid()) // the locks' object types from its memory (.NET 9+)
	end, err := st.Run(set)
	res := lk.Result()
	if err != nil {
		return nil, err
	}
	span := time.Duration(hdr.DurationNanos(end.LastTimestamp - end.FirstTimestamp))
	err = report.WriteLocksPprof(&buf, res, hdr.Time(end.FirstTimestamp), span)
	return buf.Bytes(), err
}

// perfProfile profiles t with the perf_event sampler when sampler permits
// it and the kernel allows it for the process (ok false: use the
// runtime's sampler). The process must be visible in clrspy's pid
// namespace.
func (d *Daemon) perfProfile(ctx context.Context, t *target, sampler string, dur time.Duration, offCPU bool) (*stacks.Profile, bool, error) {
	// Without the tracepoint's permission, off-CPU time is left out and
	// the profile's comments say why. 99 Hz: `clrspy profile --hz`'s.
	opts := perf.Options{OffCPU: offCPU, Hz: 99}
	use, _, err := capture.UsePerf(sampler, t.HostPid(), opts)
	if !use {
		return nil, err != nil, err
	}
	p, err := t.perfProfile(ctx, opts, dur)
	if err != nil {
		return nil, true, err
	}
	if p.Total == 0 {
		return nil, true, errors.New("no stack samples arrived")
	}
	return p, true, nil
}

// perfProfile samples t with the perf_event sampler for dur (cut short
// when ctx ends) beside a session of its own that names managed code and
// marks GC stops: capture's job, as `clrspy profile --sampler perf` runs
// it.
func (t *target) perfProfile(ctx context.Context, opts perf.Options, dur time.Duration) (*stacks.Profile, error) {
	st, err := t.Open(source.Spec{Providers: perf.SessionProviders, BufferMB: t.d.cfg.BufferSize(), Duration: dur, NoStackwalk: true})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	// Cancelling ctx stops the session; the stream then ends.
	defer context.AfterFunc(ctx, st.Stop)()
	return capture.PerfProfile(st, opts)
}

// claim finds the monitored target of pid and takes its one-at-a-time
// slot for a request that runs for span (a profile, a heap snapshot),
// answering itself when it cannot (then t is nil): 404 for no such
// target, 403 for a peer that may not read it (peerAllowed), 409 while
// the slot is held, 429 with Retry-After within every of the slot's last
// request's end (each one costs the target: a heap snapshot pauses it).
// The request's deadlines are moved past span: the server's (Server)
// would cut it. release frees the slot.
func (d *Daemon) claim(w http.ResponseWriter, r *http.Request, pid, what string, span, every time.Duration, slotOf func(*target) *slot) (t *target, release func()) {
	t = d.lookup(pid)
	if t == nil || !t.Up() {
		http.Error(w, fmt.Sprintf("pid %s: no process monitored now (see /targets)", pid), http.StatusNotFound)
		return nil, nil
	}
	if !d.peerAllowed(w, r, t) {
		return nil, nil
	}
	s := slotOf(t)
	if !s.busy.CompareAndSwap(false, true) {
		http.Error(w, fmt.Sprintf("pid %s: %s is being taken already; one at a time", pid, what), http.StatusConflict)
		return nil, nil
	}
	if wait := s.wait(every); wait > 0 {
		s.busy.Store(false)
		w.Header().Set("Retry-After", strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		http.Error(w, fmt.Sprintf("pid %s: %s was taken less than %v ago (each one costs the process); retry in %v", pid, what, every, wait.Round(100*time.Millisecond)), http.StatusTooManyRequests)
		return nil, nil
	}
	extendDeadlines(w, span)
	return t, s.release
}

// slot is a target's one-at-a-time request slot (profiles, heap
// snapshots) and the end of its last request, for the rate limit.
type slot struct {
	busy    atomic.Bool
	mu      sync.Mutex
	lastEnd time.Time
}

// wait is how long until a request may start, every after the last one
// ended (0: now; every <= 0: no limit).
func (s *slot) wait(every time.Duration) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if every <= 0 || s.lastEnd.IsZero() {
		return 0
	}
	return max(0, every-time.Since(s.lastEnd))
}

func (s *slot) release() {
	s.mu.Lock()
	s.lastEnd = time.Now()
	s.mu.Unlock()
	s.busy.Store(false)
}
