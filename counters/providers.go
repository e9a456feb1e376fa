package counters

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/clrspy/clrspy/ipc"
)

// Provider names.
const (
	// RuntimeSource is the runtime's EventSource, whose EventCounters
	// carry the System.Runtime counters.
	RuntimeSource = "System.Runtime"
	// MetricsSource is the EventSource that publishes System.Diagnostics
	// meters to out-of-process listeners.
	MetricsSource = "System.Diagnostics.Metrics"
	// RuntimeMeter is the runtime's meter (.NET 9 and later).
	RuntimeMeter = "System.Runtime"
)

// keywordTimeSeriesValues enables MetricsSource's value events.
const keywordTimeSeriesValues = 0x2

// Options configure the counters a session asks for and the Analyzer that
// reads them. The zero value is usable.
type Options struct {
	// Interval is how often the runtime publishes values (0: 1 s). The
	// runtime keeps one EventCounters interval per EventSource: with
	// several sessions the shortest wins.
	Interval time.Duration
	// SessionID names this client's meter session; events of other
	// sessions are ignored. "" in Providers makes one (NewSessionID); ""
	// in New accepts every session (a trace file recorded by another tool).
	// "SHARED" joins the runtime's shared session (several clients with the
	// same Interval and limits read the same values).
	SessionID string
	// MaxSeries bounds the series kept (0: 1000, as the runtime's own
	// MaxTimeSeries default); further series are counted, not kept.
	MaxSeries int
	// Meter also asks for the System.Runtime meter (.NET 9+) through
	// System.Diagnostics.Metrics. Off by default: on .NET 10.0.12 a target
	// that exits within about a second of such a session starting hangs
	// at exit in about a third of the runs (a runtime deadlock; measured:
	// 5 of 15 launched programs, 4 of 12 attached ones exiting 1 s after
	// the attach; EventCounters alone: 0 of 30), and clrspy serve attaches
	// to every process, short-lived ones included. The EventCounters give
	// the same semantic-convention names (Mappings) on every runtime.
	Meter bool
	// Meters are the meters asked for besides System.Runtime (with Meter).
	Meters []string
}

func (o *Options) interval() time.Duration {
	if o.Interval <= 0 {
		return time.Second
	}
	return o.Interval
}

func (o *Options) maxSeries() int {
	if o.MaxSeries <= 0 {
		return 1000
	}
	return o.MaxSeries
}

// NewSessionID returns a meter session id unique to this process and call.
func NewSessionID() string {
	var b [6]byte
	rand.Read(b[:])
	return fmt.Sprintf("clrspy-%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// Providers returns the providers a session enables to read the runtime's
// counters: the System.Runtime EventCounters (every runtime) and, with
// opts.Meter, the System.Runtime meter (.NET 9 and later; earlier runtimes
// ignore it; Providers then sets opts.SessionID when empty, so pass the
// same Options to New).
func Providers(opts *Options) []ipc.Provider {
	sec := strconv.FormatFloat(opts.interval().Seconds(), 'f', -1, 64)
	ps := []ipc.Provider{{Name: RuntimeSource, Level: ipc.LevelInformational, Args: "EventCounterIntervalSec=" + sec}}
	if !opts.Meter {
		return ps
	}
	if opts.SessionID == "" {
		opts.SessionID = NewSessionID()
	}
	meters := RuntimeMeter
	for _, m := range opts.Meters {
		meters += "," + m
	}
	return append(ps, ipc.Provider{Name: MetricsSource, Level: ipc.LevelInformational, Keywords: keywordTimeSeriesValues,
		Args: "SessionId=" + opts.SessionID + ";Metrics=" + meters + ";RefreshInterval=" + sec +
			";MaxTimeSeries=" + strconv.Itoa(opts.maxSeries()) + ";MaxHistograms=20"})
}
