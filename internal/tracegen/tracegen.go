package tracegen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Options shape the stream; the zero value is a NetTrace V4 stream of a
// 64-bit process whose clock ticks in nanoseconds from 0.
type Options struct {
	Format       int   // nettrace.FormatNetTraceV4 (default) or V6
	QPCFrequency int64 // ticks per second; 0: 1e9 (a tick is a nanosecond)
	SyncTimeQPC  int64 // the session start's timestamp
	// Start is the wall clock of SyncTimeQPC; zero: 2026-01-01 00:00 UTC.
	Start time.Time
	// Writer is passed on to nettrace.NewWriter (block size, sequence
	// points); its Format is Format.
	Writer nettrace.WriterOptions
}

// Trace is a stream being described: a header, a clock and the events so
// far, in the order written. The zero value is not usable; call New.
type Trace struct {
	hdr   nettrace.Header
	opt   Options
	now   int64 // ticks
	evs   []nettrace.Event
	metas map[metaKey]*nettrace.Metadata
	thr   map[uint64]*Thread
}

type metaKey struct {
	kind    nettrace.ProviderKind
	id, ver uint32
}

// New starts a trace with the default options.
func New() *Trace { return NewOptions(Options{}) }

// NewOptions starts a trace with o.
func NewOptions(o Options) *Trace {
	if o.QPCFrequency == 0 {
		o.QPCFrequency = 1_000_000_000
	}
	if o.Format == 0 {
		o.Format = nettrace.FormatNetTraceV4
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	o.Writer.Format = o.Format
	return &Trace{
		hdr: nettrace.Header{
			FormatVersion: o.Format, SyncTimeUTC: o.Start, SyncTimeQPC: o.SyncTimeQPC, QPCFrequency: o.QPCFrequency,
			PointerSize: 8, ProcessID: 4242, NumberOfProcessors: 4, ExpectedCPUSamplingRate: 1_000_000,
		},
		opt:   o,
		now:   o.SyncTimeQPC,
		metas: map[metaKey]*nettrace.Metadata{},
		thr:   map[uint64]*Thread{},
	}
}

// Header is the stream's header (what a reader of Bytes returns).
func (g *Trace) Header() *nettrace.Header { return &g.hdr }

// Now is the clock: the timestamp the next event gets.
func (g *Trace) Now() int64 { return g.now }

// Thread is the thread with OS id tid: events it writes are on it and
// captured by it.
func (g *Trace) Thread(tid uint64) *Thread {
	t := g.thr[tid]
	if t == nil {
		t = &Thread{g: g, id: tid}
		g.thr[tid] = t
	}
	return t
}

// Events are the events as built, in the order written (metadata carry
// the provider kind a reader would give them; a lost count is LostBefore).
func (g *Trace) Events() []nettrace.Event { return g.evs }

// Write writes the trace as a nettrace stream to w.
func (g *Trace) Write(w io.Writer) error {
	wr, err := nettrace.NewWriter(w, g.hdr, g.opt.Writer)
	if err != nil {
		return err
	}
	for i := range g.evs {
		if err := wr.WriteEvent(&g.evs[i]); err != nil {
			return err
		}
	}
	return wr.Close()
}

// Bytes is the trace as a nettrace stream.
func (g *Trace) Bytes() ([]byte, error) {
	var b bytes.Buffer
	err := g.Write(&b)
	return b.Bytes(), err
}

// TB is the part of testing.TB that Run uses (the package does not import
// testing: the gentrace command links it).
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Run writes the trace, reads it back with nettrace.NewReader and calls fn
// on every event the reader returns (one reused value, as from a file); it
// returns the header the reader read. A stream the reader refuses fails
// the test.
func (g *Trace) Run(t TB, fn func(*nettrace.Event)) *nettrace.Header {
	t.Helper()
	hdr, err := g.Read(fn)
	if err != nil {
		t.Fatalf("tracegen: %v", err)
	}
	return hdr
}

// Read is Run returning the error.
func (g *Trace) Read(fn func(*nettrace.Event)) (*nettrace.Header, error) {
	data, err := g.Bytes()
	if err != nil {
		return nil, err
	}
	rd, err := nettrace.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd.Header(), nil
		}
		if err != nil {
			return rd.Header(), err
		}
		fn(ev)
	}
}

// meta is the metadata of event id of provider kind p at version v, built
// once from clrevents' spec table (keywords and level of the manifest's
// row). The runtime writes no event names, and neither does the trace.
func (g *Trace) meta(p nettrace.ProviderKind, id, v uint32) *nettrace.Metadata {
	k := metaKey{p, id, v}
	if m := g.metas[k]; m != nil {
		return m
	}
	m := &nettrace.Metadata{Provider: providerName(p), Runtime: p, EventID: id, Version: v}
	if s := clrevents.Lookup(p, id); s != nil {
		m.Keywords, m.Level = s.Keywords(), s.Level()
	}
	// A record of nothing but zeros (the sample profiler's) would be
	// written as its provider name alone, which nettrace reads but
	// TraceEvent does not (it reads on into the next record): the
	// runtime writes every field and an empty parameter list.
	m.HasFields = m.EventID == 0 && m.Keywords == 0 && m.Version == 0 && m.Level == 0
	g.metas[k] = m
	return m
}

func providerName(p nettrace.ProviderKind) string {
	if name := p.Name(); name != "" {
		return name
	}
	panic(fmt.Sprintf("tracegen: provider kind %d has no name", p))
}

// version is the payload version the decoder of event id reads, the one
// the appenders write.
func version(p nettrace.ProviderKind, id uint32) uint32 {
	v, ok := clrevents.Lookup(p, id).Version()
	if !ok {
		panic(fmt.Sprintf("tracegen: clrevents decodes no event %d of provider kind %d", id, p))
	}
	return v
}
