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
	// Meters are the meters asked for besides System.Runtime.
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
// counters on every runtime: the System.Runtime EventCounters (all
// runtimes) and the System.Runtime meter (.NET 9 and later; earlier
// runtimes ignore it). It sets opts.SessionID when empty, so pass the same
// Options to New.
func Providers(opts *Options) []ipc.Provider {
	if opts.SessionID == "" {
		opts.SessionID = NewSessionID()
	}
	sec := strconv.FormatFloat(opts.interval().Seconds(), 'f', -1, 64)
	meters := RuntimeMeter
	for _, m := range opts.Meters {
		meters += "," + m
	}
	return []ipc.Provider{
		{Name: RuntimeSource, Level: ipc.LevelInformational, Args: "EventCounterIntervalSec=" + sec},
		{Name: MetricsSource, Level: ipc.LevelInformational, Keywords: keywordTimeSeriesValues,
			Args: "SessionId=" + opts.SessionID + ";Metrics=" + meters + ";RefreshInterval=" + sec +
				";MaxTimeSeries=" + strconv.Itoa(opts.maxSeries()) + ";MaxHistograms=20"},
	}
}
