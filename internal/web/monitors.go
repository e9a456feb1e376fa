package web

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/exceptions"
	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/fleet"
	"github.com/clrspy/clrspy/internal/monitor"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/runinfo"
	"github.com/clrspy/clrspy/stacks"
	"github.com/clrspy/clrspy/threadpool"
)

// MonitorsOptions configure Monitors. Every field is optional.
type MonitorsOptions struct {
	// Interval is how often subscribers get an update (default 250 ms):
	// the page receives GC rows in batches, however fast GCs come.
	Interval time.Duration
	// CPUEvery is how often the flame graph (the monitor's CPU window) and
	// the lock table are sent again (default 2 s).
	CPUEvery time.Duration
	// MaxRows bounds the GC and suspension rows kept per target for new
	// subscribers (default 50,000 each; the oldest go first). The
	// monitor's rollup stays exact.
	MaxRows int
}

func (o *MonitorsOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 250 * time.Millisecond
	}
	if o.CPUEvery <= 0 {
		o.CPUEvery = 2 * time.Second
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 50_000
	}
}

// Monitors is the live page's view of a fleet (what clrspy serve runs):
// every session of its targets, each followed by a monitor.Monitor. The
// page gets every GC row as the monitor finishes it (the same rows as the
// offline page, through the monitor's OnGC), the monitor's rollup,
// process facts, lock table and flame graph of its CPU window. Its state
// per session is kept in the session (fleet.Session.Value): a session's
// page goes when the fleet removes the session.
type Monitors struct {
	o    MonitorsOptions
	f    *fleet.Fleet
	stop chan struct{}
	once sync.Once
}

// mtarget is one session's row log and subscribers.
type mtarget struct {
	id, name string
	pid      int
	hdr      *nettrace.Header
	sess     *fleet.Session

	mu                sync.Mutex      // guards the rest (OnGC runs on the reader's goroutine)
	rows              []gcpause.GCRow // the page's GC rows (it gets them as columns)
	susp              *report.SuspColumns
	rowBase, suspBase int
	subs              map[*subscriber]struct{}
	ended             bool
	end               *Update      // the last update, for late subscribers
	page              *report.Page // the final page
	cpu               *report.Flame
	cpuVer            int
	cpuAt             time.Time
	cpuTotal          int64 // samples when cpu was taken
	locks             *report.PageLocks
	locksVer          int
	locksWaits        uint64
	// The thread-pool and exceptions sections and the monitor's results
	// they were built from (the monitor keeps a result while nothing in
	// it changed).
	tp     *report.PageThreadPool
	tpVer  int
	tpRes  *threadpool.Result
	exc    *report.PageExceptions
	excVer int
	excRes *exceptions.Result
	req    *report.PageRequests
	reqVer int
}

type subscriber struct {
	ch                chan Update
	rowNext, suspNext int // absolute number of the next row to send
	cpuVer, locksVer  int
	tpVer, excVer     int
	reqVer            int
	done              <-chan struct{}
}

// pageKey keeps a session's mtarget.
type pageKey struct{}

// NewMonitors follows every session f opens from now on; Close stops its
// updates.
func NewMonitors(f *fleet.Fleet, o MonitorsOptions) *Monitors {
	o.defaults()
	s := &Monitors{o: o, f: f, stop: make(chan struct{})}
	f.Watch(fleet.Watcher{Prepare: s.prepare, Ended: s.ended, Removed: s.removed})
	return s
}

// prepare adds the web view's hooks to the options of a session's
// monitor (OnGC and OnSuspension, after any already set).
func (s *Monitors) prepare(sess *fleet.Session, opts *monitor.Options) []analysis.Analyzer {
	src := sess.Source()
	pid := src.HostPid()
	if pid <= 0 {
		pid = src.Pid()
	}
	t := &mtarget{id: sess.ID(), name: src.Name(), pid: pid, hdr: sess.Header(), sess: sess, susp: &report.SuspColumns{}, subs: map[*subscriber]struct{}{}}
	sess.SetValue(pageKey{}, t)
	onGC, onSusp := opts.OnGC, opts.OnSuspension
	opts.OnGC = func(g *gcpause.GC) {
		t.gc(g, s.o.MaxRows)
		if onGC != nil {
			onGC(g)
		}
	}
	opts.OnSuspension = func(x *gcpause.Suspension) {
		t.suspension(x, s.o.MaxRows)
		if onSusp != nil {
			onSusp(x)
		}
	}
	s.once.Do(func() { go s.loop() })
	return nil
}

// SetCPU shows p, a CPU profile of session sess made beside its monitor
// (serve's perf sampler, one window at a time), as its flame graph under
// label, from the next update on. The flame's window is p's, on the
// session's clock.
func (s *Monitors) SetCPU(sess *fleet.Session, label string, p *stacks.Profile) {
	t := pageOf(sess)
	if t == nil || p == nil || p.Total == 0 {
		return
	}
	f := report.NewFlame(nil, p, nil, 1)
	f.Label = label
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	if t.hdr != nil && !p.Start.IsZero() {
		f.FromMS = math.Max(0, float64(p.Start.Sub(t.hdr.SyncTimeUTC))/1e6)
		f.ToMS = f.FromMS + float64(p.DurationNanos)/1e6
	}
	t.cpu, t.cpuAt, t.cpuTotal = f, time.Now(), p.Total
	t.cpuVer++
}

// added is t's monitor (nil before it is made).
func (t *mtarget) added() *monitor.Monitor { return t.sess.Monitor() }

func pageOf(sess *fleet.Session) *mtarget {
	if sess == nil {
		return nil
	}
	t, _ := sess.Value(pageKey{}).(*mtarget)
	return t
}

// pages is every session's page, in the order the sessions began.
func (s *Monitors) pages() []*mtarget {
	var ts []*mtarget
	for _, sess := range s.f.Sessions() {
		if t := pageOf(sess); t != nil {
			ts = append(ts, t)
		}
	}
	return ts
}

// ended sends the session's last update (its subscribers' channels close
// after it) and keeps its final page for later subscribers: the monitor
// has read the stream to its end.
func (s *Monitors) ended(sess *fleet.Session) {
	if t := pageOf(sess); t != nil && t.added() != nil {
		s.publish(t, true)
	}
}

// removed drops the session's page; its subscribers' channels close.
func (s *Monitors) removed(sess *fleet.Session) {
	t := pageOf(sess)
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for sub := range t.subs {
		close(sub.ch)
		delete(t.subs, sub)
	}
}

// Close stops the updates.
func (s *Monitors) Close() {
	s.once.Do(func() {}) // no loop after Close
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
}

func (s *Monitors) loop() {
	tick := time.NewTicker(s.o.Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			for _, t := range s.pages() {
				t.mu.Lock()
				idle := len(t.subs) == 0 || t.ended || t.added() == nil
				t.mu.Unlock()
				if !idle {
					s.publish(t, false)
				}
			}
		case <-s.stop:
			return
		}
	}
}

func (t *mtarget) gc(g *gcpause.GC, maxRows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows, gcpause.NewGCRow(g))
	if n := len(t.rows); n > maxRows {
		drop := n - maxRows/2
		t.rows = slices.Clone(t.rows[drop:])
		t.rowBase += drop
	}
}

func (t *mtarget) suspension(x *gcpause.Suspension, maxRows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.susp.Append(x)
	if n := t.susp.Len(); n > maxRows {
		drop := n - maxRows/2
		t.susp = t.susp.Slice(drop, n).Clone()
		t.suspBase += drop
	}
}

// state is what a monitor snapshot says, in the page's terms.
type state struct {
	summary gcpause.Summary
	input   report.Input
	run     runinfo.Info
	t0, t1  float64
	flame   *report.Flame
	total   int64 // CPU samples since the session began
	locks   *report.PageLocks
	waits   uint64
	// The monitor's thread-pool and exceptions results (nil: none), and
	// when the former's times begin.
	tpRes   *threadpool.Result
	tpFirst int64
	excRes  *exceptions.Result
	// The requests section (nil: no request events).
	req *report.PageRequests
}

// publish sends every subscriber of t what it has not seen (final: the
// last update, with End set).
func (s *Monitors) publish(t *mtarget, final bool) {
	st := pageState(t.added().Snapshot())
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	now := time.Now()
	// New samples, now and then; and at the end whatever changed: the
	// rundown names frames of samples already sent.
	newer := st.total > t.cpuTotal && now.Sub(t.cpuAt) >= s.o.CPUEvery
	if final {
		newer = st.total > 0 && !reflect.DeepEqual(st.flame, t.cpu)
	}
	if st.flame != nil && newer {
		t.cpu, t.cpuAt, t.cpuTotal = st.flame, now, st.total
		t.cpuVer++
	}
	if st.locks != nil && st.waits != t.locksWaits {
		t.locks, t.locksWaits = st.locks, st.waits
		t.locksVer++
	}
	if st.tpRes != t.tpRes {
		// The file's page's own section of the same analysis.
		t.tpRes = st.tpRes
		if p := report.PageThreadPoolOf(st.tpRes, st.tpFirst); !reflect.DeepEqual(p, t.tp) {
			t.tp = p
			t.tpVer++
		}
	}
	if st.excRes != t.excRes {
		t.excRes = st.excRes
		if p := report.PageExceptionsOf(st.excRes); !reflect.DeepEqual(p, t.exc) {
			t.exc = p
			t.excVer++
		}
	}
	if st.req != nil && !reflect.DeepEqual(st.req, t.req) {
		t.req = st.req
		t.reqVer++
	}
	for sub := range t.subs {
		u := t.delta(sub, &st)
		if final {
			u.End = true
			select {
			case sub.ch <- u:
			case <-sub.done:
			case <-time.After(2 * time.Second): // a page that stopped reading
			}
			close(sub.ch)
			delete(t.subs, sub)
			continue
		}
		select {
		case sub.ch <- u:
			t.sent(sub)
		default:
			// The page is behind: it gets these rows with the next update.
		}
	}
	if final {
		t.ended = true
		t.page = t.snapshot(&st)
		u := Update{End: true, Summary: &st.summary, Input: &st.input, Run: &st.run, T1MS: st.t1}
		t.end = &u
	}
}

// delta is what sub has not seen yet.
func (t *mtarget) delta(sub *subscriber, st *state) Update {
	u := Update{Summary: &st.summary, Input: &st.input, Run: &st.run, T1MS: st.t1}
	if from := max(sub.rowNext-t.rowBase, 0); from < len(t.rows) {
		u.GCs = report.GCColumnsOf(t.rows[from:])
		u.GCReasons = reasonNames(u.GCs, nil)
	}
	if from := max(sub.suspNext-t.suspBase, 0); from < t.susp.Len() {
		u.Suspensions = t.susp.Slice(from, t.susp.Len())
		u.SuspendReasons = reasonNames(nil, u.Suspensions)
	}
	if sub.cpuVer < t.cpuVer {
		u.CPU = t.cpu
	}
	if sub.locksVer < t.locksVer {
		u.Locks = t.locks
	}
	if sub.tpVer < t.tpVer {
		u.ThreadPool = t.tp
	}
	if sub.excVer < t.excVer {
		u.Exceptions = t.exc
	}
	if sub.reqVer < t.reqVer {
		u.Requests = t.req
	}
	return u
}

// sent advances sub past what delta gave it.
func (t *mtarget) sent(sub *subscriber) {
	sub.rowNext = t.rowBase + len(t.rows)
	sub.suspNext = t.suspBase + t.susp.Len()
	sub.cpuVer, sub.locksVer = t.cpuVer, t.locksVer
	sub.tpVer, sub.excVer, sub.reqVer = t.tpVer, t.excVer, t.reqVer
}

// snapshot is the page as it stands (the rows kept so far).
func (t *mtarget) snapshot(st *state) *report.Page {
	sum := st.summary
	p := &report.Page{
		Title: t.name, Input: st.input, Run: st.run, Pid: t.pid, T0MS: st.t0, T1MS: st.t1, Summary: &sum,
		GCs: report.GCColumnsOf(t.rows), Suspensions: t.susp.Slice(0, t.susp.Len()),
		GCReasons: map[string]string{}, SuspendReasons: map[string]string{},
		CPU: t.cpu, Locks: t.locks, ThreadPool: t.tp, Exceptions: t.exc, Requests: t.req,
	}
	if t.hdr != nil && !t.hdr.SyncTimeUTC.IsZero() {
		p.StartUTC = t.hdr.SyncTimeUTC.UTC().Format(time.RFC3339Nano)
	}
	p.AddReasons(p.GCs, p.Suspensions)
	for _, r := range sum.SuspensionsByReason {
		p.SuspendReasons[strconv.Itoa(int(r.Reason))] = r.Reason.String()
	}
	return p
}

func reasonNames(g *report.GCColumns, s *report.SuspColumns) map[string]string {
	p := &report.Page{GCReasons: map[string]string{}, SuspendReasons: map[string]string{}}
	if g == nil {
		g = &report.GCColumns{}
	}
	if s == nil {
		s = &report.SuspColumns{}
	}
	p.AddReasons(g, s)
	if len(p.GCReasons) > 0 {
		return p.GCReasons
	}
	return p.SuspendReasons
}

// Targets lists the sessions to choose from now, in display order.
func (s *Monitors) Targets() []Target {
	out := []Target{}
	for _, t := range s.pages() {
		t.mu.Lock()
		if t.added() != nil {
			out = append(out, Target{ID: t.id, Name: t.name, Pid: t.pid, Ended: t.ended})
		}
		t.mu.Unlock()
	}
	return out
}

// Subscribe returns the updates of session id until ctx ends or the
// session's stream ends: first one with Snapshot set (everything kept so
// far), then changes. The last update of an ended session has End set;
// the channel is closed after it, or when ctx ends. An unknown id is an
// error.
func (s *Monitors) Subscribe(ctx context.Context, id string) (<-chan Update, error) {
	t := pageOf(s.f.Session(id))
	var mon *monitor.Monitor
	if t != nil {
		mon = t.added()
	}
	if mon == nil {
		return nil, fmt.Errorf("no target %q", id)
	}
	st := pageState(mon.Snapshot())
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		ch := make(chan Update, 2)
		ch <- Update{Snapshot: t.page}
		ch <- *t.end
		close(ch)
		return ch, nil
	}
	sub := &subscriber{ch: make(chan Update, 8), done: ctx.Done()}
	sub.ch <- Update{Snapshot: t.snapshot(&st)}
	t.sent(sub)
	t.subs[sub] = struct{}{}
	go func() {
		<-ctx.Done()
		t.mu.Lock()
		defer t.mu.Unlock()
		if _, ok := t.subs[sub]; ok {
			delete(t.subs, sub)
			close(sub.ch)
		}
	}()
	return sub.ch, nil
}

// pageState converts a monitor snapshot to the page's terms.
func pageState(snap *monitor.Snapshot) state {
	var st state
	ses := &snap.Session
	if ses.Events > 0 {
		st.t1 = math.Max(0, float64(snap.Time.Sub(ses.StartUTC))/1e6)
		st.t0 = math.Max(0, st.t1-ses.ElapsedSec*1e3)
	}
	in := report.Input{Source: ses.Source, Live: ses.Kind != "file" && ses.Kind != "stdin", Events: ses.Events,
		EventsLost: ses.EventsLost, Truncated: ses.Truncated, DecodeErrors: ses.DecodeErrors}
	if ses.Truncated {
		in.Partial = append(in.Partial, "the trace is truncated: only the events before the cut are counted")
	}
	if ses.EventsLost > 0 {
		in.Partial = append(in.Partial, fmt.Sprintf("%d events were lost (the runtime dropped them: its buffer was full)", ses.EventsLost))
	}
	if ses.DecodeErrors > 0 {
		in.Partial = append(in.Partial, fmt.Sprintf("%d events did not decode and were skipped", ses.DecodeErrors))
	}
	if ses.Error != "" {
		in.Partial = append(in.Partial, "reading failed: "+ses.Error)
	}
	in.Complete = len(in.Partial) == 0
	st.input = in
	pr := &snap.Process
	st.run = runinfo.Info{CommandLine: pr.CommandLine, OS: pr.OS, Arch: pr.Arch, Runtime: pr.RuntimeVersion}
	if k := pr.GC.Kind; k != "" {
		st.run.GC, st.run.ServerGC = k, k == "server"
		if c := pr.GC.Concurrent; c != nil {
			st.run.ConcurrentGC = *c
			if *c {
				st.run.GC += ", concurrent"
			} else {
				st.run.GC += ", non-concurrent"
			}
		}
	}
	// The file report's own summary of the same rollup: one model.
	st.summary = snap.GC.Summary
	if c := snap.CPU; c != nil && c.Profile != nil {
		// The page's own flame of package stacks' profile (the window's),
		// as a file's page draws one.
		st.flame = report.NewFlame(nil, c.Profile, nil, 1)
		st.flame.FromMS, st.flame.ToMS = math.Max(0, st.t1-c.WindowSec*1e3), st.t1
		st.total = c.Total
	}
	if l := &snap.Locks; l.Waits+uint64(l.Waiting) > 0 {
		// The file's page's own table of the same analysis.
		st.locks, st.waits = report.PageLocksOf(snap.LocksResult), l.Waits
	}
	// Built into sections by publish, once per new result.
	st.tpRes, st.tpFirst, st.excRes = snap.ThreadPoolResult, snap.ThreadPoolFirstNanos, snap.ExceptionsResult
	// The file's page's own section of the same analysis (nil without
	// request events).
	st.req = report.PageRequestsOf(snap.Requests)
	return st
}
