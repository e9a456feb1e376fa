package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/report"
	"github.com/clrspy/clrspy/runinfo"
)

// Target is one process (or trace) the page can show.
type Target struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Pid   int    `json:"pid,omitempty"`
	Ended bool   `json:"ended"`
}

// Update is one message to the page. Apart from Snapshot, fields left nil
// did not change; row columns hold only the new rows.
type Update struct {
	// Snapshot replaces everything the page shows (the first update).
	Snapshot *report.Page
	// GCs and Suspensions are rows added since the previous update, in
	// order; GCReasons and SuspendReasons name their reason codes.
	GCs            *report.GCColumns
	Suspensions    *report.SuspColumns
	GCReasons      map[string]string
	SuspendReasons map[string]string
	// Summary is the exact rollup of every GC so far; Input the stream's
	// state (events, lost events); Run the process facts.
	Summary *gcpause.Summary
	Input   *report.Input
	Run     *runinfo.Info
	// T1MS is the latest event's time (ms since the session start): the
	// page's clock.
	T1MS float64
	// CPU replaces the flame graph (the last seconds of samples).
	CPU *report.Flame
	// Locks replaces the lock table.
	Locks *report.PageLocks
	// ThreadPool and Exceptions replace those sections.
	ThreadPool *report.PageThreadPool
	Exceptions *report.PageExceptions
	// Requests replaces the requests section (the waterfall's slowest
	// with it).
	Requests *report.PageRequests
	// End says the target's stream ended (nothing follows).
	End bool
}

// wire is Update as the page reads it.
type wire struct {
	Type           string              `json:"type"` // snapshot, update, end
	Page           *report.Page        `json:"page,omitempty"`
	GCs            *report.GCColumns   `json:"gcs,omitempty"`
	Suspensions    *report.SuspColumns `json:"suspensions,omitempty"`
	GCReasons      map[string]string   `json:"gc_reasons,omitempty"`
	SuspendReasons map[string]string   `json:"suspend_reasons,omitempty"`
	Summary        *gcpause.Summary    `json:"summary,omitempty"`
	Input          *report.Input       `json:"input,omitempty"`
	Run            *runinfo.Info       `json:"run,omitempty"`
	T1MS           *float64            `json:"t1_ms,omitempty"`
	CPU            *report.Flame       `json:"cpu,omitempty"`
	Locks          *report.PageLocks   `json:"locks,omitempty"`
	// The page's own keys, so the page replaces its sections by name.
	ThreadPool *report.PageThreadPool `json:"thread_pool,omitempty"`
	Exceptions *report.PageExceptions `json:"exceptions,omitempty"`
	Requests   *report.PageRequests   `json:"requests,omitempty"`
}

// MarshalJSON writes the update as the page's message.
func (u *Update) MarshalJSON() ([]byte, error) {
	w := wire{Type: "update", Page: u.Snapshot, GCs: u.GCs, Suspensions: u.Suspensions, GCReasons: u.GCReasons,
		SuspendReasons: u.SuspendReasons, Summary: u.Summary, Input: u.Input, Run: u.Run, CPU: u.CPU, Locks: u.Locks,
		ThreadPool: u.ThreadPool, Exceptions: u.Exceptions, Requests: u.Requests}
	switch {
	case u.Snapshot != nil:
		w.Type = "snapshot"
	case u.End:
		w.Type = "end"
	}
	if u.T1MS > 0 {
		t := u.T1MS
		w.T1MS = &t
	}
	return json.Marshal(w)
}

// Options configure the handler.
type Options struct {
	// Title is the page's title before a target is chosen ("clrspy").
	Title string
	// WriteTimeout bounds one websocket message to a slow page (default
	// 10 s); the connection is dropped past it.
	WriteTimeout time.Duration
	// MaxClients bounds the websockets open at once (default 64); past
	// it, an upgrade is refused with 503 and the reason.
	MaxClients int
}

// Handler serves the live page and its websocket over src.
func Handler(src *Monitors, o Options) http.Handler {
	if o.Title == "" {
		o.Title = "clrspy"
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.MaxClients <= 0 {
		o.MaxClients = 64
	}
	h := &handler{src: src, o: o, clients: make(chan struct{}, o.MaxClients)}
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", h.page)
	mux.HandleFunc("/index.html", h.page)
	mux.HandleFunc("/targets.json", h.targets)
	mux.HandleFunc("/ws", h.socket)
	return mux
}

type handler struct {
	src     *Monitors
	o       Options
	clients chan struct{} // one token per open websocket
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	report.WriteLivePage(w, report.LivePage{Title: h.o.Title, Socket: "ws", Targets: "targets.json"})
}

func (h *handler) targets(w http.ResponseWriter, r *http.Request) {
	ts := h.src.Targets()
	if ts == nil {
		ts = []Target{}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(ts)
}

func (h *handler) socket(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("target")
	if strings.TrimSpace(id) == "" {
		http.Error(w, "no target: ws?target=ID (targets.json lists them)", http.StatusBadRequest)
		return
	}
	select {
	case h.clients <- struct{}{}:
		defer func() { <-h.clients }()
	default:
		http.Error(w, fmt.Sprintf("too many live views open (%d): close one", cap(h.clients)), http.StatusServiceUnavailable)
		return
	}
	// The connection outlives the server's per-request deadlines: each
	// write has its own (WriteTimeout), and reading only sees the close.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	// No permessage-deflate: a compressor per socket costs about a
	// megabyte each (500 sockets offering it took 468 MB), for messages
	// that are small after the first.
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept answered the request
	}
	defer c.CloseNow()
	// The page sends nothing: reading only handles its close and pings.
	ctx := c.CloseRead(r.Context())
	updates, err := h.src.Subscribe(ctx, id)
	if err != nil {
		c.Close(websocket.StatusPolicyViolation, err.Error())
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case u, ok := <-updates:
			if !ok {
				c.Close(websocket.StatusNormalClosure, "the target's stream ended")
				return
			}
			b, err := json.Marshal(&u)
			if err != nil {
				c.Close(websocket.StatusInternalError, err.Error())
				return
			}
			wctx, cancel := context.WithTimeout(ctx, h.o.WriteTimeout)
			err = c.Write(wctx, websocket.MessageText, b)
			cancel()
			if err != nil {
				return
			}
		}
	}
}
