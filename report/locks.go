package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/clrspy/clrspy/locks"
)

// LocksDocument is the `clrspy locks --json` document. Times are
// milliseconds; ids are numbers (addresses fit a JSON number exactly: user
// space is below 2^47).
type LocksDocument struct {
	Input
	Summary      LocksSummary   `json:"summary"`
	Locks        []LockJSON     `json:"locks"`
	Threads      []LockThread   `json:"threads"`
	StillWaiting []LockWaitJSON `json:"still_waiting"`
	Notes        []string       `json:"notes"`
}

// LocksSummary totals the stream.
type LocksSummary struct {
	Contentions       int64   `json:"contentions"`
	TotalWaitMs       float64 `json:"total_wait_ms"`
	MeanWaitMs        float64 `json:"mean_wait_ms"`
	MaxWaitMs         float64 `json:"max_wait_ms"`
	Unpaired          int     `json:"unpaired"`
	StopsWithoutStart int     `json:"stops_without_start"`
	LostStarts        int     `json:"lost_starts"`
	Locks             int     `json:"locks"`
	LockIDsReported   bool    `json:"lock_ids_reported"`
	// OwnerIDKind says what the runtime's owner values turned out to be:
	// "os-tid", "thread-object", "managed-id", "mixed" or "".
	OwnerIDKind  string `json:"owner_id_kind"`
	DecodeErrors int    `json:"decode_errors"`
}

// LockJSON is one lock.
type LockJSON struct {
	LockID     uint64 `json:"lock_id"`
	ObjectID   uint64 `json:"object_id"`
	ObjectType string `json:"object_type"`
	// TypeUnknownReason: why a live target's memory did not name it.
	TypeUnknownReason string          `json:"type_unknown_reason,omitempty"`
	Contentions       int64           `json:"contentions"`
	TotalWaitMs       float64         `json:"total_wait_ms"`
	MeanWaitMs        float64         `json:"mean_wait_ms"`
	MaxWaitMs         float64         `json:"max_wait_ms"`
	StillWaiting      int             `json:"still_waiting"`
	Histogram         []LockBucket    `json:"histogram"`
	Owners            []LockOwnerJSON `json:"owners"`
	TopStacks         []LockStackJSON `json:"top_stacks"`
}

// LockBucket is one wait-histogram bucket: waits shorter than UpperNs
// (null for the last, open bucket) and not shorter than the previous
// bucket's bound.
type LockBucket struct {
	Bucket  string `json:"bucket"`
	UpperNs *int64 `json:"upper_ns"`
	Count   int64  `json:"count"`
}

// LockOwnerJSON is an owner thread of a lock. OSThreadID is null when the
// runtime's value could not be mapped or no owner was reported (value 0).
type LockOwnerJSON struct {
	OSThreadID      *uint64 `json:"os_thread_id"`
	ThreadName      string  `json:"thread_name,omitempty"`
	ManagedThreadID uint32  `json:"managed_thread_id,omitempty"`
	OwnerValue      uint64  `json:"owner_value"`
	MappedVia       string  `json:"mapped_via"`
	Contentions     int64   `json:"contentions"`
	TotalWaitMs     float64 `json:"total_wait_ms"`
}

// LockStackJSON is a waiting stack, frames leaf first.
type LockStackJSON struct {
	Contentions int64    `json:"contentions"`
	TotalWaitMs float64  `json:"total_wait_ms"`
	Frames      []string `json:"frames"`
}

// LockThread is the waiting one thread did.
type LockThread struct {
	OSThreadID      uint64  `json:"os_thread_id"`
	ThreadName      string  `json:"thread_name,omitempty"`
	ManagedThreadID uint32  `json:"managed_thread_id,omitempty"`
	Contentions     int64   `json:"contentions"`
	TotalWaitMs     float64 `json:"total_wait_ms"`
	MaxWaitMs       float64 `json:"max_wait_ms"`
}

// LockWaitJSON is a wait still open at the end of the stream.
type LockWaitJSON struct {
	OSThreadID uint64        `json:"os_thread_id"`
	LockID     uint64        `json:"lock_id"`
	Owner      LockOwnerJSON `json:"owner"`
	WaitedMs   float64       `json:"waited_ms"`
	Frames     []string      `json:"frames"`
}

func lockMs(ns int64) float64 { return float64(ns) / 1e6 }

func lockOwnerJSON(o locks.Owner) LockOwnerJSON {
	j := LockOwnerJSON{OwnerValue: o.Raw, MappedVia: o.Via, ManagedThreadID: o.ManagedID, ThreadName: o.Name,
		Contentions: o.Contentions, TotalWaitMs: lockMs(o.TotalNs)}
	if o.Mapped {
		tid := o.OSThreadID
		j.OSThreadID = &tid
	}
	return j
}

func lockFrames(r *locks.Result, i int) []string {
	if i < 0 || i >= len(r.Stacks) || r.Stacks[i].Frames == nil {
		return []string{}
	}
	return r.Stacks[i].Frames
}

// NewLocksDocument converts an analysis result.
func NewLocksDocument(in Input, r *locks.Result) *LocksDocument {
	s := &r.Summary
	d := &LocksDocument{Input: in, Summary: LocksSummary{
		Contentions: s.Contentions, TotalWaitMs: lockMs(s.TotalNs), MeanWaitMs: lockMs(s.MeanNs()),
		MaxWaitMs: lockMs(s.MaxNs), Unpaired: s.Unpaired, StopsWithoutStart: s.StopsWithoutStart,
		LostStarts: s.LostStarts, Locks: len(r.Locks), LockIDsReported: s.LockIDs,
		OwnerIDKind: r.OwnerKind, DecodeErrors: s.DecodeErrors,
	}, Locks: []LockJSON{}, Threads: []LockThread{}, StillWaiting: []LockWaitJSON{}, Notes: r.Notes}
	if d.Notes == nil {
		d.Notes = []string{}
	}
	for _, l := range r.Locks {
		lj := LockJSON{LockID: l.ID, ObjectID: l.Object, ObjectType: l.ObjectType, TypeUnknownReason: l.TypeUnknownReason, Contentions: l.Contentions,
			TotalWaitMs: lockMs(l.TotalNs), MeanWaitMs: lockMs(l.MeanNs()), MaxWaitMs: lockMs(l.MaxNs),
			StillWaiting: l.Waiting, Owners: []LockOwnerJSON{}, TopStacks: []LockStackJSON{}}
		for i, c := range l.Histogram.Counts {
			b := LockBucket{Bucket: locks.HistogramLabels[i], Count: int64(c)}
			if _, hi := l.Histogram.Bucket(i); hi != 0 {
				b.UpperNs = &hi
			}
			lj.Histogram = append(lj.Histogram, b)
		}
		for _, o := range l.Owners {
			lj.Owners = append(lj.Owners, lockOwnerJSON(o))
		}
		for _, st := range l.Stacks {
			lj.TopStacks = append(lj.TopStacks, LockStackJSON{Contentions: st.Contentions,
				TotalWaitMs: lockMs(st.TotalNs), Frames: lockFrames(r, st.Stack)})
		}
		d.Locks = append(d.Locks, lj)
	}
	for _, t := range r.Threads {
		d.Threads = append(d.Threads, LockThread{OSThreadID: t.OSThreadID, ThreadName: t.Name, ManagedThreadID: t.ManagedID,
			Contentions: t.Contentions, TotalWaitMs: lockMs(t.TotalNs), MaxWaitMs: lockMs(t.MaxNs)})
	}
	for _, w := range r.StillWaiting {
		d.StillWaiting = append(d.StillWaiting, LockWaitJSON{OSThreadID: w.Thread, LockID: w.LockID,
			Owner: lockOwnerJSON(w.Owner), WaitedMs: lockMs(w.SoFarNs), Frames: lockFrames(r, w.Stack)})
	}
	return d
}

// WriteLocksJSON writes the document as indented JSON.
func WriteLocksJSON(w io.Writer, d *LocksDocument) error {
	return writeJSON(w, d, false)
}

// lockDur formats nanoseconds for people: 1.234s, 12.345ms, 100.5µs, 800ns.
func lockDur(ns int64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.3fs", float64(ns)/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.3fms", float64(ns)/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1fµs", float64(ns)/1e3)
	}
	return fmt.Sprintf("%dns", ns)
}

// maxLockFrames bounds the frames printed per stack in the text report.
const maxLockFrames = 24

func lockName(id uint64) string {
	if id == 0 {
		return "(unnamed)"
	}
	return fmt.Sprintf("%#x", id)
}

func lockOrUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

func lockOwnerText(o locks.Owner) string {
	switch {
	case o.Raw == 0:
		return "(not reported)"
	case !o.Mapped:
		return fmt.Sprintf("unmapped %#x", o.Raw)
	}
	if o.Name != "" {
		return fmt.Sprintf("%d (%s)", o.OSThreadID, o.Name)
	}
	return fmt.Sprint(o.OSThreadID)
}

// WriteLocksText writes the human-readable report.
func WriteLocksText(w io.Writer, in Input, r *locks.Result) error {
	ew := &lockErrWriter{w: w}
	s := &r.Summary
	if l := in.PartialLine(); l != "" {
		fmt.Fprintln(ew, l)
	}
	fmt.Fprintf(ew, "Lock contention in %s\n", in.Source)
	fmt.Fprintf(ew, "  %d waits on %d lock(s), total %s, mean %s, max %s; %d still waiting at the end\n",
		s.Contentions, len(r.Locks), lockDur(s.TotalNs), lockDur(s.MeanNs()), lockDur(s.MaxNs), s.Unpaired)
	switch r.OwnerKind {
	case "os-tid":
		fmt.Fprintln(ew, "  owner values are OS thread ids")
	case "thread-object":
		fmt.Fprintln(ew, "  owner values are runtime Thread addresses, mapped to OS threads through the thread events")
	case "managed-id":
		fmt.Fprintln(ew, "  owner values are managed thread ids, mapped to OS threads through the thread events")
	case "mixed":
		fmt.Fprintln(ew, "  owner values were of several kinds (OS thread ids, Thread addresses, managed ids)")
	}
	if len(r.Locks) > 0 {
		fmt.Fprintln(ew)
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "LOCK\tOBJECT\tTYPE\tWAITS\tTOTAL\tMEAN\tMAX\tWAITING\t")
		for _, l := range r.Locks {
			obj := "-"
			if l.Object != 0 {
				obj = fmt.Sprintf("%#x", l.Object)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t\n", lockName(l.ID), obj, lockOrUnknown(l.ObjectType),
				l.Contentions, lockDur(l.TotalNs), lockDur(l.MeanNs()), lockDur(l.MaxNs), l.Waiting)
		}
		tw.Flush()
	}
	// The locks that matter in full; the rest are rows of the table.
	full := locksThatMatter(r)
	for _, l := range r.Locks[:full] {
		fmt.Fprintf(ew, "\nLock %s", lockName(l.ID))
		if l.Object != 0 {
			fmt.Fprintf(ew, " on object %#x", l.Object)
		}
		if l.ObjectType != "" {
			fmt.Fprintf(ew, " of type %s\n", l.ObjectType)
		} else if l.TypeUnknownReason != "" {
			fmt.Fprintf(ew, " (object type unknown: %s)\n", l.TypeUnknownReason)
		} else {
			fmt.Fprintln(ew, " (object type not named in the stream)")
		}
		var hb []string
		for i, c := range l.Histogram.Counts {
			hb = append(hb, fmt.Sprintf("%s %d", locks.HistogramLabels[i], c))
		}
		fmt.Fprintf(ew, "  waits: %s\n", strings.Join(hb, " | "))
		if len(l.Owners) > 0 {
			fmt.Fprintln(ew, "  owners (thread holding the lock when the wait began):")
			tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "    \tOS THREAD\tMANAGED\tWAITS\tTOTAL\t")
			for _, o := range l.Owners {
				mid := "-"
				if o.ManagedID != 0 {
					mid = fmt.Sprint(o.ManagedID)
				}
				fmt.Fprintf(tw, "    \t%s\t%s\t%d\t%s\t\n", lockOwnerText(o), mid, o.Contentions, lockDur(o.TotalNs))
			}
			tw.Flush()
		}
		for i, st := range l.Stacks {
			fmt.Fprintf(ew, "  waiting stack #%d: %d waits, %s\n", i+1, st.Contentions, lockDur(st.TotalNs))
			writeLockFrames(ew, lockFrames(r, st.Stack))
		}
	}
	if rest := r.Locks[full:]; len(rest) > 0 {
		var n, ns int64
		for _, l := range rest {
			n += l.Contentions
			ns += l.TotalNs
		}
		fmt.Fprintf(ew, "\n%d more locks (%d waits, %s) are only rows of the table: they hold under %.0f%% of the wait (--json has their stacks)\n",
			len(rest), n, lockDur(ns), 100*(1-pageLocksShare))
	}
	if len(r.Threads) > 0 {
		fmt.Fprintln(ew, "\nWaiting threads")
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "OS THREAD\tNAME\tMANAGED\tWAITS\tTOTAL\tMAX\t")
		for _, t := range r.Threads {
			mid := "-"
			if t.ManagedID != 0 {
				mid = fmt.Sprint(t.ManagedID)
			}
			name := t.Name
			if name == "" {
				name = "-"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t\n", t.OSThreadID, name, mid, t.Contentions, lockDur(t.TotalNs), lockDur(t.MaxNs))
		}
		tw.Flush()
	}
	if len(r.StillWaiting) > 0 {
		fmt.Fprintln(ew, "\nStill waiting when the stream ended")
		for _, wt := range r.StillWaiting {
			fmt.Fprintf(ew, "  thread %d on lock %s behind %s: waiting for at least %s\n",
				wt.Thread, lockName(wt.LockID), lockOwnerText(wt.Owner), lockDur(wt.SoFarNs))
			writeLockFrames(ew, lockFrames(r, wt.Stack))
		}
	}
	if len(r.Notes) > 0 {
		fmt.Fprintln(ew, "\nNotes")
		for _, n := range r.Notes {
			fmt.Fprintf(ew, "  - %s\n", n)
		}
	}
	return ew.err
}

func writeLockFrames(w io.Writer, fs []string) {
	if len(fs) == 0 {
		fmt.Fprintln(w, "      (no stack)")
		return
	}
	for i, f := range fs {
		if i == maxLockFrames {
			fmt.Fprintf(w, "      ... %d more frames\n", len(fs)-i)
			break
		}
		fmt.Fprintf(w, "      %s\n", f)
	}
}

// lockErrWriter remembers the first write error so the text writer can check
// once.
type lockErrWriter struct {
	w   io.Writer
	err error
}

func (e *lockErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, nil
}
