package counters

import (
	"encoding/binary"
	"slices"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/nettrace"
)

// rawKind is how the runtime published a series.
type rawKind uint8

const (
	ecMean     rawKind = iota + 1 // EventCounters "Mean": a polled value
	ecSum                         // EventCounters "Sum": increments
	mCounter                      // CounterRateValuePublished
	mUpDown                       // UpDownCounterRateValuePublished
	mGauge                        // GaugeValuePublished
	mHistogram                    // HistogramValuePublished
)

// series is one time series as the runtime publishes it.
type series struct {
	kind     rawKind
	provider string // EventSource or meter
	name     string // counter or instrument name
	tags     string // meter tags, "k=v,k2=v2"
	unit     string // DisplayUnits or the instrument's unit

	value    float64 // last polled value, a meter counter's total
	hasValue bool
	sum      float64 // increments (deltas) since the session began
	last     float64 // the last increment
	hasLast  bool
	interval float64 // seconds the last increment covers
	updated  int64   // ns since the session start
	// meter counters: value carries the runtime's total (version ≥ 1)
	withTotal bool

	count     float64 // histograms
	hsum      float64
	quantiles []byte // raw UTF-16 "q=v;q=v"
}

// instrument is what BeginInstrumentReporting said about an instrument.
type instrument struct {
	typ, unit, description string
}

// Analyzer reads counter events. Create it with New; it is not safe for
// concurrent use (package monitor guards it).
type Analyzer struct {
	hdr  *nettrace.Header
	opts Options

	plans       map[*nettrace.Metadata]*plan
	series      map[string]*series
	order       []*series
	instruments map[string]*instrument // by meter + "\x00" + instrument

	f          fields
	key        []byte
	nb         numBuf
	sessionRaw []byte // opts.SessionID in UTF-16LE; nil accepts any

	meterInterval   float64 // seconds, from CollectionStart
	sawMeter, sawEC bool
	dropped         int
	limitReached    bool
	errors          []string
	errorCount      int
	stats           analysis.Stats
}

// maxErrors bounds the error messages kept.
const maxErrors = 8

// New returns an Analyzer for a stream with header hdr.
func New(hdr *nettrace.Header, opts Options) *Analyzer {
	a := &Analyzer{
		hdr:         hdr,
		opts:        opts,
		plans:       make(map[*nettrace.Metadata]*plan),
		series:      make(map[string]*series),
		instruments: make(map[string]*instrument),
		key:         make([]byte, 0, 256),
	}
	if opts.SessionID != "" {
		for _, c := range opts.SessionID {
			a.sessionRaw = binary.LittleEndian.AppendUint16(a.sessionRaw, uint16(c))
		}
	}
	return a
}

// SawMeter reports whether a meter value arrived (cheap: the monitor asks
// after every counter event until the runtime's totals seeded it).
func (a *Analyzer) SawMeter() bool { return a.sawMeter }

// Stats implements analysis.Analyzer.
func (a *Analyzer) Stats() analysis.Stats { return a.stats }

// Event feeds one event; events other than counter events are ignored.
func (a *Analyzer) Event(ev *nettrace.Event) {
	m := ev.Meta
	if m.Runtime != nettrace.NotRuntime {
		return
	}
	p := a.plans[m]
	if p == nil {
		p = newPlan(m)
		a.plans[m] = p
	}
	if p.kind == evNone {
		return
	}
	if !p.ok || !a.f.walk(p, ev.Payload) {
		a.stats.Failed(errPayload{m.Provider, m.EventName})
		return
	}
	f := &a.f
	if p.kind != evCounters && a.sessionRaw != nil && !equalBytes(f.raw[rSession], a.sessionRaw) {
		if p.kind == evOtherSession {
			// Another session holds the meter: ours gets no values.
			a.stats.Used()
			a.addError("another tool's metrics session is running in the target; the runtime's meter is not available to this session (EventCounters still are)")
		}
		return
	}
	a.stats.Used()
	ts := a.hdr.Nanos(ev.Timestamp)
	switch p.kind {
	case evCounters:
		a.eventCounter(m, ts)
	case evCounterRate, evUpDownRate, evGauge, evHistogram:
		a.meterValue(p.kind, ts)
	case evBeginInstrument:
		a.beginInstrument()
	case evCollectionStart:
		s, ok1 := f.num(rIntervalStart)
		e, ok2 := f.num(rIntervalEnd)
		if ok1 && ok2 && e > s {
			a.meterInterval = (e - s) / 1e7 // FILETIME ticks
		}
	case evError:
		if f.has(rError) {
			a.addError(utf16String(f.raw[rError]))
		}
	case evLimit:
		a.limitReached = true
	case evOtherSession:
		// Our own id as the running session: the error is another
		// client's, not ours.
	}
}

type errPayload struct{ provider, event string }

func (e errPayload) Error() string {
	return e.provider + "/" + e.event + ": payload shorter than its metadata"
}

func equalBytes(a, b []byte) bool { return string(a) == string(b) }

func (a *Analyzer) addError(msg string) {
	a.errorCount++
	if len(a.errors) < maxErrors && !slices.Contains(a.errors, msg) {
		a.errors = append(a.errors, msg)
	}
}

// lookup finds the series of key a.key, creating it with mk (nil when the
// series cap is reached).
func (a *Analyzer) lookup(mk func() *series) *series {
	if s, ok := a.series[string(a.key)]; ok {
		return s
	}
	if len(a.order) >= a.opts.maxSeries() {
		a.dropped++
		return nil
	}
	s := mk()
	a.series[string(a.key)] = s
	a.order = append(a.order, s)
	return s
}

func (a *Analyzer) eventCounter(m *nettrace.Metadata, ts int64) {
	f := &a.f
	name := f.raw[rName]
	if name == nil {
		return
	}
	kind := ecMean
	if equalUTF16(f.raw[rCounterType], "Sum") || f.has(rIncrement) && !f.has(rMean) {
		kind = ecSum
	}
	a.key = append(a.key[:0], 'E')
	a.key = append(a.key, m.Provider...)
	a.key = append(a.key, 0, 0)
	a.key = append(a.key, name...)
	s := a.lookup(func() *series {
		return &series{kind: kind, provider: m.Provider, name: utf16String(name), unit: utf16String(f.raw[rDisplayUnits])}
	})
	if s == nil {
		return
	}
	a.sawEC = true
	s.updated = ts
	if iv, ok := f.num(rIntervalSec); ok {
		s.interval = iv
	}
	if kind == ecSum {
		if v, ok := f.num(rIncrement); ok {
			s.last, s.hasLast = v, true
			s.sum += v
		}
		return
	}
	if v, ok := f.num(rMean); ok {
		s.value, s.hasValue = v, true
	}
}

func (a *Analyzer) meterKey(withTags bool) {
	f := &a.f
	a.key = append(a.key[:0], 'M')
	a.key = append(a.key, f.raw[rMeter]...)
	a.key = append(a.key, 0, 0)
	a.key = append(a.key, f.raw[rInstrument]...)
	if withTags {
		a.key = append(a.key, 0, 0)
		a.key = append(a.key, f.raw[rTags]...)
	}
}

func (a *Analyzer) meterValue(k evKind, ts int64) {
	f := &a.f
	if f.raw[rInstrument] == nil {
		return
	}
	var kind rawKind
	switch k {
	case evCounterRate:
		kind = mCounter
	case evUpDownRate:
		kind = mUpDown
	case evGauge:
		kind = mGauge
	default:
		kind = mHistogram
	}
	a.meterKey(true)
	s := a.lookup(func() *series {
		return &series{kind: kind, provider: utf16String(f.raw[rMeter]), name: utf16String(f.raw[rInstrument]),
			tags: utf16String(f.raw[rTags]), unit: utf16String(f.raw[rUnit])}
	})
	if s == nil {
		return
	}
	a.sawMeter = true
	s.updated = ts
	s.interval = a.meterInterval
	if s.interval == 0 {
		s.interval = a.opts.interval().Seconds()
	}
	switch kind {
	case mCounter, mUpDown:
		// "rate" is the change over the interval ("" on the first one);
		// "value" (version ≥ 1) the instrument's value.
		if d, ok := a.nb.parseUTF16Float(f.raw[rRate]); ok {
			s.last, s.hasLast = d, true
			s.sum += d
		} else {
			s.hasLast = false
		}
		if f.has(rValue) {
			s.withTotal = true
			if v, ok := a.nb.parseUTF16Float(f.raw[rValue]); ok {
				s.value, s.hasValue = v, true
			}
		} else {
			s.value, s.hasValue = s.sum, true
		}
	case mGauge:
		if v, ok := a.nb.parseUTF16Float(f.raw[rLastValue]); ok {
			s.value, s.hasValue = v, true
		}
	case mHistogram:
		if c, ok := f.num(rCount); ok {
			s.count = c
		}
		if v, ok := f.num(rSum); ok {
			s.hsum = v
		}
		s.quantiles = append(s.quantiles[:0], f.raw[rQuantiles]...)
		s.hasValue = true
	}
}

func (a *Analyzer) beginInstrument() {
	f := &a.f
	if f.raw[rInstrument] == nil || len(a.instruments) >= a.opts.maxSeries() {
		return
	}
	// Rare (once per instrument and session): decoding allocates.
	a.instruments[utf16String(f.raw[rMeter])+"\x00"+utf16String(f.raw[rInstrument])] = &instrument{
		typ: utf16String(f.raw[rInstrumentType]), unit: utf16String(f.raw[rUnit]),
		description: utf16String(f.raw[rDescription]),
	}
}
