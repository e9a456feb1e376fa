package report

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// StatHeader is the trace header as `clrspy stat --json` prints it.
type StatHeader struct {
	FormatVersion           int    `json:"format_version"`
	PointerSize             int    `json:"pointer_size"`
	ProcessID               int    `json:"process_id"`
	NumberOfProcessors      int    `json:"number_of_processors"`
	QPCFrequency            int64  `json:"qpc_frequency"`
	SyncTimeQPC             int64  `json:"sync_time_qpc"`
	SyncTimeUTC             string `json:"sync_time_utc"`
	ExpectedCPUSamplingRate int    `json:"expected_cpu_sampling_rate_ns"`
	NoTraceObject           bool   `json:"no_trace_object,omitempty"`
}

// StatDocument is everything `clrspy stat` reports about a trace.
type StatDocument struct {
	Input
	Header           StatHeader            `json:"header"`
	EventCounts      []nettrace.EventCount `json:"event_counts"`
	EventsWithStack  uint64                `json:"events_with_stack"`
	Metadata         int                   `json:"metadata"`
	Stacks           int                   `json:"stacks"`
	MaxStackDepth    int                   `json:"max_stack_depth"`
	SequencePoints   int                   `json:"sequence_points"`
	CaptureThreads   int                   `json:"capture_threads"`
	Blocks           map[string]int        `json:"blocks"`
	Bytes            int64                 `json:"bytes"`
	FirstEventNanos  int64                 `json:"first_event_ns"`
	LastEventNanos   int64                 `json:"last_event_ns"`
	UnknownMetadata  uint64                `json:"unknown_metadata_refs"`
	StacksEvicted    uint64                `json:"stacks_evicted,omitempty"`
	UnresolvedStacks uint64                `json:"unresolved_stacks,omitempty"`
	TruncationReason string                `json:"truncation,omitempty"`
	CutEvent         string                `json:"cut_event,omitempty"`
	// NewerVersions are event types whose payload version is newer than
	// the one clrspy's decoder reads: the fields added since are not read.
	NewerVersions []NewerVersion `json:"newer_versions,omitempty"`
}

// NewerVersion is an event type written in a newer version than clrspy
// decodes.
type NewerVersion struct {
	Provider       string `json:"provider"`
	ID             uint32 `json:"id"`
	Name           string `json:"name"`
	Version        uint32 `json:"version"`
	DecoderVersion uint32 `json:"decoder_version"`
	Count          uint64 `json:"count"`
}

// NewStatHeader converts a reader's header.
func NewStatHeader(h *nettrace.Header, formatVersion int, noTrace bool) StatHeader {
	return StatHeader{
		FormatVersion:           formatVersion,
		PointerSize:             h.PointerSize,
		ProcessID:               h.ProcessID,
		NumberOfProcessors:      h.NumberOfProcessors,
		QPCFrequency:            h.QPCFrequency,
		SyncTimeQPC:             h.SyncTimeQPC,
		SyncTimeUTC:             h.SyncTimeUTC.Format(time.RFC3339Nano),
		ExpectedCPUSamplingRate: h.ExpectedCPUSamplingRate,
		NoTraceObject:           noTrace,
	}
}

// WriteStatJSON writes the document as indented JSON.
func WriteStatJSON(w io.Writer, d *StatDocument) error {
	return writeJSON(w, d, true)
}

// WriteStatText writes the document for people.
func WriteStatText(w io.Writer, d *StatDocument) error {
	h := d.Header
	fmt.Fprintf(w, "%s\n", d.Source)
	name := fmt.Sprintf("NetTrace V%d", h.FormatVersion)
	if h.FormatVersion == 3 {
		name = "NetPerf V3"
	}
	fmt.Fprintf(w, "  format        %s, %d-bit, %s\n", name, h.PointerSize*8, byteSize(d.Bytes))
	fmt.Fprintf(w, "  process       pid %d, %d processors\n", h.ProcessID, h.NumberOfProcessors)
	fmt.Fprintf(w, "  sync time     %s (QPC %d at %d Hz)\n", h.SyncTimeUTC, h.SyncTimeQPC, h.QPCFrequency)
	fmt.Fprintf(w, "  events        %d (%d with a stack), span %.3f s\n", d.Events, d.EventsWithStack,
		float64(d.LastEventNanos-d.FirstEventNanos)/1e9)
	fmt.Fprintf(w, "  metadata      %d records; stacks %d (max depth %d); sequence points %d; capture threads %d\n",
		d.Metadata, d.Stacks, d.MaxStackDepth, d.SequencePoints, d.CaptureThreads)
	if h.NoTraceObject {
		fmt.Fprintf(w, "  WARNING       no Trace object: header values are assumed (64-bit, 1 GHz clock)\n")
	}
	if d.EventsLost > 0 {
		fmt.Fprintf(w, "  LOST EVENTS   %d (sequence-number gaps: the runtime dropped them)\n", d.EventsLost)
	} else {
		fmt.Fprintf(w, "  lost events   0\n")
	}
	if d.UnknownMetadata > 0 {
		fmt.Fprintf(w, "  UNDEFINED     %d events referenced metadata that was never defined (skipped)\n", d.UnknownMetadata)
	}
	if d.StacksEvicted > 0 {
		fmt.Fprintf(w, "  EVICTED       %d stacks dropped by the stack cache's bound (no sequence point for too long)\n", d.StacksEvicted)
	}
	if d.UnresolvedStacks > 0 {
		fmt.Fprintf(w, "  UNRESOLVED    %d events named a stack the reader did not hold (evicted or never defined): counted without a stack\n", d.UnresolvedStacks)
	}
	for _, n := range d.NewerVersions {
		fmt.Fprintf(w, "  NEWER         %s v%d (%d events): clrspy reads v%d, the fields added since are not read\n", n.Name, n.Version, n.Count, n.DecoderVersion)
	}
	if d.Truncated {
		fmt.Fprintf(w, "  TRUNCATED     %s\n", d.TruncationReason)
		if d.CutEvent != "" {
			fmt.Fprintf(w, "                not delivered: the event cut in half, %s\n", d.CutEvent)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "count\twith stack\tid\tver\t event")
	for _, e := range d.EventCounts {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t %s/%s\n", e.Count, e.WithStack, e.ID, e.Version, e.Provider, e.Name)
	}
	return tw.Flush()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// BuildStat assembles the stat document once the stream ended.
func BuildStat(in Input, r *nettrace.Reader, sum *nettrace.Summary, end analysis.End) *StatDocument {
	st := r.Stats()
	h := r.Header()
	d := &StatDocument{
		Input:            in,
		Header:           NewStatHeader(h, r.FormatVersion(), st.NoTraceObject),
		EventCounts:      sum.Counts(),
		EventsWithStack:  st.AllWithStack,
		Metadata:         st.Metadata,
		Stacks:           st.Stacks,
		MaxStackDepth:    st.MaxStackDepth,
		SequencePoints:   st.SequencePoints,
		CaptureThreads:   st.CaptureThreads,
		Blocks:           snakeKeys(st.Blocks),
		Bytes:            st.Bytes,
		UnknownMetadata:  st.UnknownMetadataRefs,
		StacksEvicted:    st.StacksEvicted,
		UnresolvedStacks: st.AllUnresolved,
		CutEvent:         st.CutEvent,
	}
	for _, c := range d.EventCounts {
		if known, newer := clrevents.Newer(c.Kind, c.ID, c.Version); newer {
			d.NewerVersions = append(d.NewerVersions, NewerVersion{Provider: c.Provider, ID: c.ID, Name: c.Name,
				Version: c.Version, DecoderVersion: known, Count: c.Count})
		}
	}
	if end.Events > 0 {
		d.FirstEventNanos = h.Nanos(end.FirstTimestamp)
		d.LastEventNanos = h.Nanos(end.LastTimestamp)
	}
	if end.Truncated != nil {
		d.TruncationReason = end.Truncated.Error()
	}
	return d
}

func snakeKeys(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[SnakeCase(k)] = v
	}
	return out
}
