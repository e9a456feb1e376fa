package counters

import (
	"encoding/binary"
	"math"
	"strconv"
	"unsafe"

	"github.com/clrspy/clrspy/nettrace"
)

// The payloads this package reads are flat sequences of strings and
// numbers (EventCounters nests them in two structs, which serialize
// inline), so a plan lists the leaf fields in order and Event walks the
// payload once, keeping byte slices into it: nothing is copied or decoded
// that is not used.

// role is what a leaf field means to the analyzer.
type role uint8

const (
	rSkip role = iota
	// EventCounters
	rName
	rMean
	rIncrement
	rIntervalSec
	rCounterType
	rDisplayUnits
	rDisplayName
	// meter events
	rSession
	rMeter
	rInstrument
	rUnit
	rTags
	rRate
	rValue
	rLastValue
	rQuantiles
	rCount
	rSum
	rInstrumentType
	rDescription
	rError
	rIntervalStart
	rIntervalEnd
	nRoles
)

// kind of event a plan reads.
type evKind uint8

const (
	evNone evKind = iota
	evCounters
	evCounterRate
	evUpDownRate
	evGauge
	evHistogram
	evBeginInstrument
	evCollectionStart
	evError
	evLimit
	evOtherSession
)

type leaf struct {
	code nettrace.TypeCode
	role role
}

type plan struct {
	kind   evKind
	leaves []leaf
	ok     bool // every leaf has a type the walker can step over
}

// fieldRoles names the fields each event kind reads (by field name, so
// every version of an event works whatever it added).
var fieldRoles = map[string]role{
	"Name": rName, "Mean": rMean, "Increment": rIncrement, "IntervalSec": rIntervalSec,
	"CounterType": rCounterType, "DisplayUnits": rDisplayUnits, "DisplayName": rDisplayName,
	"sessionId": rSession, "meterName": rMeter, "instrumentName": rInstrument, "unit": rUnit,
	"tags": rTags, "rate": rRate, "value": rValue, "lastValue": rLastValue, "quantiles": rQuantiles,
	"count": rCount, "sum": rSum, "instrumentType": rInstrumentType, "description": rDescription,
	"errorMessage": rError, "intervalStartTime": rIntervalStart, "intervalEndTime": rIntervalEnd,
	"runningSessionId": rSession,
}

func eventKind(m *nettrace.Metadata) evKind {
	switch m.Provider {
	case MetricsSource:
		switch m.EventName {
		case "CounterRateValuePublished":
			return evCounterRate
		case "UpDownCounterRateValuePublished":
			return evUpDownRate
		case "GaugeValuePublished":
			return evGauge
		case "HistogramValuePublished":
			return evHistogram
		case "BeginInstrumentReporting":
			return evBeginInstrument
		case "CollectionStart":
			return evCollectionStart
		case "Error", "ObservableInstrumentCallbackError":
			return evError
		case "TimeSeriesLimitReached", "HistogramLimitReached":
			return evLimit
		case "MultipleSessionsNotSupportedError":
			return evOtherSession
		}
		return evNone
	}
	if m.EventName == "EventCounters" && m.Runtime == nettrace.NotRuntime {
		return evCounters
	}
	return evNone
}

func newPlan(m *nettrace.Metadata) *plan {
	p := &plan{kind: eventKind(m), ok: true}
	if p.kind == evNone || !m.HasFields {
		p.kind = evNone
		return p
	}
	var flatten func(fs []nettrace.Field, depth int)
	flatten = func(fs []nettrace.Field, depth int) {
		for i := range fs {
			f := &fs[i]
			if f.Type.Code == nettrace.TypeObject {
				if depth > 4 {
					p.ok = false
					return
				}
				flatten(f.Type.Fields, depth+1)
				continue
			}
			if fixedSize(f.Type.Code) < 0 && f.Type.Code != nettrace.TypeString {
				p.ok = false
			}
			p.leaves = append(p.leaves, leaf{code: f.Type.Code, role: fieldRoles[f.Name]})
		}
	}
	flatten(m.Fields, 0)
	return p
}

// fixedSize is the payload size of a fixed-size type, -1 for others.
func fixedSize(c nettrace.TypeCode) int {
	switch c {
	case nettrace.TypeBoolean8, nettrace.TypeSByte, nettrace.TypeByte, nettrace.TypeUTF8CodeUnit:
		return 1
	case nettrace.TypeChar, nettrace.TypeInt16, nettrace.TypeUInt16:
		return 2
	case nettrace.TypeBoolean32, nettrace.TypeInt32, nettrace.TypeUInt32, nettrace.TypeSingle:
		return 4
	case nettrace.TypeInt64, nettrace.TypeUInt64, nettrace.TypeDouble, nettrace.TypeDateTime:
		return 8
	case nettrace.TypeDecimal, nettrace.TypeGUID:
		return 16
	}
	return -1
}

// fields are the leaves of one payload by role: raw bytes (UTF-16 for
// strings, little-endian for numbers) pointing into the payload.
type fields struct {
	raw   [nRoles][]byte
	codes [nRoles]nettrace.TypeCode
}

// walk splits payload along p; false when it is shorter than the plan.
func (f *fields) walk(p *plan, b []byte) bool {
	for i := range f.raw {
		f.raw[i] = nil
	}
	off := 0
	for _, l := range p.leaves {
		var n int
		if l.code == nettrace.TypeString {
			n = -1
			for j := off; j+1 < len(b); j += 2 {
				if b[j] == 0 && b[j+1] == 0 {
					n = j - off
					break
				}
			}
			if n < 0 {
				return false
			}
			if l.role != rSkip {
				f.raw[l.role] = b[off : off+n]
				f.codes[l.role] = l.code
			}
			off += n + 2
			continue
		}
		n = fixedSize(l.code)
		if off+n > len(b) {
			return false
		}
		if l.role != rSkip {
			f.raw[l.role] = b[off : off+n]
			f.codes[l.role] = l.code
		}
		off += n
	}
	return true
}

// has reports whether the payload had the field.
func (f *fields) has(r role) bool { return f.raw[r] != nil }

// num reads a numeric field as float64.
func (f *fields) num(r role) (float64, bool) {
	b := f.raw[r]
	if b == nil {
		return 0, false
	}
	switch f.codes[r] {
	case nettrace.TypeDouble:
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), true
	case nettrace.TypeSingle:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), true
	case nettrace.TypeInt32:
		return float64(int32(binary.LittleEndian.Uint32(b))), true
	case nettrace.TypeUInt32:
		return float64(binary.LittleEndian.Uint32(b)), true
	case nettrace.TypeInt64:
		return float64(int64(binary.LittleEndian.Uint64(b))), true
	case nettrace.TypeUInt64, nettrace.TypeDateTime:
		return float64(binary.LittleEndian.Uint64(b)), true
	}
	return 0, false
}

// equalUTF16 reports whether UTF-16LE bytes b spell the ASCII string s.
func equalUTF16(b []byte, s string) bool {
	if len(b) != 2*len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if b[2*i] != s[i] || b[2*i+1] != 0 {
			return false
		}
	}
	return true
}

// numBuf holds the ASCII form of a number being parsed.
type numBuf [64]byte

// parseUTF16Float parses an invariant-culture number written in UTF-16LE
// ("" is no value). It does not allocate unless the text is malformed.
func (nb *numBuf) parseUTF16Float(b []byte) (float64, bool) {
	n := len(b) / 2
	if n == 0 || n > len(nb) {
		return 0, false
	}
	for i := 0; i < n; i++ {
		if b[2*i+1] != 0 || b[2*i] >= 0x80 {
			return 0, false
		}
		nb[i] = b[2*i]
	}
	v, err := strconv.ParseFloat(unsafe.String(&nb[0], n), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// utf16String decodes UTF-16LE bytes (allocates: for rare events only).
func utf16String(b []byte) string {
	u := make([]rune, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := rune(binary.LittleEndian.Uint16(b[i:]))
		if c >= 0xD800 && c < 0xDC00 && i+3 < len(b) {
			d := rune(binary.LittleEndian.Uint16(b[i+2:]))
			if d >= 0xDC00 && d < 0xE000 {
				u = append(u, (c-0xD800)<<10+(d-0xDC00)+0x10000)
				i += 2
				continue
			}
		}
		u = append(u, c)
	}
	return string(u)
}
