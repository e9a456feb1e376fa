package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/clrspy/clrspy/heap"
	"github.com/clrspy/clrspy/stacks"
)

// HeapTypeJSON is one type of `clrspy heap --json`.
type HeapTypeJSON struct {
	Type              string  `json:"type"`
	Sampled           int     `json:"sampled"`
	EstBytes          float64 `json:"est_bytes"`
	EstObjects        float64 `json:"est_objects"`
	Decided           int     `json:"decided"`
	SurvivedOneGCPct  float64 `json:"survived_one_gc_pct"`
	ReachedGen2Pct    float64 `json:"reached_gen2_pct"`
	DiedInGen2Pct     float64 `json:"died_in_gen2_pct"`
	AliveAtEnd        int     `json:"alive_at_end"`
	EstLiveBytesAtEnd float64 `json:"est_live_bytes_at_end"`
}

// HeapSiteJSON is one allocation site.
type HeapSiteJSON struct {
	Site string `json:"site"`
	HeapTypeJSON
}

// HeapAgeJSON is one bucket of the age-at-death histogram.
type HeapAgeJSON struct {
	MinGCs  int `json:"min_gcs"`
	MaxGCs  int `json:"max_gcs,omitempty"` // absent: no upper bound
	Objects int `json:"objects"`
}

// HeapDocument is `clrspy heap --json`.
type HeapDocument struct {
	Input
	GCs             int  `json:"gcs"`
	TrackedObjects  int  `json:"tracked_objects"`
	Untracked       int  `json:"untracked_samples"`
	Dead            int  `json:"dead"`
	AliveAtEnd      int  `json:"alive_at_end"`
	Remapped        int  `json:"remapped"`
	MovementEvents  bool `json:"movement_events"`
	RangeEvents     int  `json:"range_events"`
	MovedRanges     int  `json:"moved_ranges"`
	SurvivingRanges int  `json:"surviving_ranges"`
	GCsWithoutData  int  `json:"gcs_without_ranges"`
	CorruptEvents   int  `json:"corrupt_range_events"`
	// SweptByBGC: objects found dead by a background GC's sweep of gen0
	// and gen1 (heap.Stats.SweptByBackgroundGC).
	SweptByBGC     int                `json:"swept_by_background_gc"`
	Contradictions HeapContradictions `json:"contradictions"`
	Types          []HeapTypeJSON     `json:"types"`
	Sites          []HeapSiteJSON     `json:"sites"`
	AgeAtDeath     []HeapAgeJSON      `json:"age_at_death"`
	Limits         HeapLimitsJSON     `json:"limits"`
	Notes          []string           `json:"notes,omitempty"`
	// Objects lists the followed objects (only with --objects): those
	// alive at the end and the most recent deaths (limits say how many
	// records were dropped).
	Objects []HeapObjectJSON `json:"objects,omitempty"`
}

// HeapLimitsJSON says what the tracker's memory bounds cost: all zero but
// max_objects when nothing hit a bound (heap.Stats documents each).
type HeapLimitsJSON struct {
	MaxObjects         int `json:"max_objects"` // reservoir size, 0: unbounded
	NotFollowed        int `json:"samples_not_followed"`
	Evicted            int `json:"evicted"`
	DeadRecordsDropped int `json:"dead_records_dropped"`
	StacksNotKept      int `json:"stacks_not_kept"`
	TypesNotKept       int `json:"types_not_kept"`
	TypeNamesNotKept   int `json:"type_names_not_kept"`
	GCRecordsDropped   int `json:"gc_records_dropped"`
}

// HeapObjectJSON is one followed object.
type HeapObjectJSON struct {
	Type        string  `json:"type"`
	Size        uint64  `json:"size,omitempty"`
	AllocMs     float64 `json:"alloc_ms"`
	Site        string  `json:"site,omitempty"`
	GCsSurvived int     `json:"gcs_survived"`
	GCsSeen     int     `json:"gcs_seen"`
	MaxGen      int     `json:"max_gen"`
	Alive       bool    `json:"alive_at_end"`
	DeathGC     int     `json:"death_gc,omitempty"`
	DeathMs     float64 `json:"death_ms,omitempty"`
	DeathGen    int     `json:"death_gen,omitempty"`
	// Weight is the reservoir's upscaling of this sample (absent: 1).
	Weight float64 `json:"weight,omitempty"`
}

// AddHeapObjects fills d.Objects from r.
func AddHeapObjects(d *HeapDocument, r *heap.Result, sym *stacks.Symbols) {
	d.Objects = make([]HeapObjectJSON, 0, len(r.Objects))
	for i := range r.Objects {
		o := &r.Objects[i]
		j := HeapObjectJSON{Type: o.Type, Size: o.Size, AllocMs: float64(o.AllocNs) / 1e6, GCsSurvived: o.Survived,
			GCsSeen: o.GCsSeen, MaxGen: o.MaxGen, Alive: o.Alive}
		if o.Stack >= 0 {
			j.Site = strings.Join(sym.Frames(r.Stacks[o.Stack][:min(2, len(r.Stacks[o.Stack]))]), " ← ")
		}
		if !o.Alive {
			j.DeathGC, j.DeathMs, j.DeathGen = o.DeathGC, float64(o.DeathNs)/1e6, o.DeathGen
		}
		if o.Weight != 1 {
			j.Weight = o.Weight
		}
		d.Objects = append(d.Objects, j)
	}
}

func heapGroupJSON(g *heap.Group) HeapTypeJSON {
	return HeapTypeJSON{Type: g.Key, Sampled: g.Sampled, EstBytes: heapRound1(g.EstBytes), EstObjects: heapRound1(g.EstCount),
		Decided: g.Decided, SurvivedOneGCPct: heapRound1(g.SurvivedOnePct()), ReachedGen2Pct: heapRound1(g.ReachedGen2Pct()),
		DiedInGen2Pct: heapRound1(g.DiedInGen2Pct()), AliveAtEnd: g.AliveAtEnd, EstLiveBytesAtEnd: heapRound1(g.LiveBytes)}
}

func heapRound1(f float64) float64 { return float64(int64(f*10+0.5)) / 10 }

// HeapContradictions counts what the replay found inconsistent (see
// heap.Contradictions).
type HeapContradictions struct {
	OverlappingRanges int `json:"overlapping_ranges"`
	OverlappingDest   int `json:"overlapping_destinations"`
	MappedTwice       int `json:"mapped_twice"`
	Collisions        int `json:"collisions"`
	AddressReused     int `json:"address_reused"`
	LateRanges        int `json:"late_ranges"`
	Unplaced          int `json:"unplaced"`
	Total             int `json:"total"`
}

func heapContradictions(c heap.Contradictions) HeapContradictions {
	return HeapContradictions{c.OverlappingRanges, c.OverlappingDest, c.MappedTwice, c.Collisions,
		c.AddressReused, c.LateRanges, c.Unplaced, c.Total()}
}

// NewHeapDocument builds the JSON document.
func NewHeapDocument(in Input, r *heap.Result, s *heap.Summary) *HeapDocument {
	st := &r.Stats
	d := &HeapDocument{Input: in, GCs: st.GCs, TrackedObjects: st.Tracked, Untracked: st.Untracked,
		AliveAtEnd: s.Total.AliveAtEnd, Dead: s.Total.Sampled - s.Total.AliveAtEnd,
		MovementEvents: st.HasMovementEvents, RangeEvents: st.RangeEvents, MovedRanges: st.MovedRanges,
		SurvivingRanges: st.SurvivingRanges, GCsWithoutData: st.GCsWithoutRanges,
		CorruptEvents: st.CorruptRangeEvents, SweptByBGC: st.SweptByBackgroundGC, Contradictions: heapContradictions(st.Contradictions),
		Remapped: st.Remapped,
		Limits: HeapLimitsJSON{MaxObjects: r.MaxObjects, NotFollowed: st.NotFollowed, Evicted: st.Evicted,
			DeadRecordsDropped: st.DeadDropped, StacksNotKept: st.StacksNotKept, TypesNotKept: st.TypesNotKept,
			TypeNamesNotKept: st.TypeNamesNotKept, GCRecordsDropped: st.GCRecordsDropped},
		Types: []HeapTypeJSON{}, Sites: []HeapSiteJSON{}, AgeAtDeath: []HeapAgeJSON{}}
	for i := range s.Types {
		d.Types = append(d.Types, heapGroupJSON(&s.Types[i]))
	}
	for i := range s.Sites {
		j := heapGroupJSON(&s.Sites[i])
		j.Type = ""
		d.Sites = append(d.Sites, HeapSiteJSON{Site: s.Sites[i].Key, HeapTypeJSON: j})
	}
	for _, a := range s.Ages {
		d.AgeAtDeath = append(d.AgeAtDeath, HeapAgeJSON{MinGCs: a.Min, MaxGCs: a.Max, Objects: a.Objects})
	}
	d.Notes = HeapNotes(r)
	return d
}

// HeapNotes explains what limits the report, one sentence each.
func HeapNotes(r *heap.Result) []string {
	var n []string
	st := &r.Stats
	if st.Tracked == 0 && st.Untracked == 0 {
		n = append(n, "no sampled allocations in the stream (enable GC at level 5 for AllocationTick, or AllocationSampling on .NET 10)")
	}
	if st.Untracked > 0 {
		n = append(n, fmt.Sprintf("%d allocation samples carry no address (AllocationTick before v3): counted as untracked, not followed", st.Untracked))
	}
	if st.NotFollowed > 0 || st.Evicted > 0 {
		n = append(n, fmt.Sprintf("at most %d objects followed at once: %d samples not followed and %d evicted by the reservoir; "+
			"the tables weight the followed ones to stand for them (estimates: a proportion over n followed samples is within about ±100/sqrt(n) points)",
			r.MaxObjects, st.NotFollowed, st.Evicted))
	}
	if st.DeadDropped > 0 || st.GCRecordsDropped > 0 {
		n = append(n, fmt.Sprintf("records dropped to bound memory: %d dead objects (the tables still count them), %d GCs", st.DeadDropped, st.GCRecordsDropped))
	}
	if st.StacksNotKept > 0 || st.TypesNotKept > 0 || st.TypeNamesNotKept > 0 {
		n = append(n, fmt.Sprintf("tables full: %d objects without their stack (%q), %d without their type, %d type names not kept",
			st.StacksNotKept, heap.SiteStackNotKept, st.TypesNotKept, st.TypeNamesNotKept))
	}
	if !st.HasMovementEvents && st.GCs > 0 {
		n = append(n, "no GCBulkMovedObjectRanges/GCBulkSurvivingObjectRanges events (GCHeapSurvivalAndMovement keyword off): survival cannot be followed and no object is declared dead")
	} else if st.GCsWithoutRanges > 0 {
		n = append(n, fmt.Sprintf("%d GCs reported no ranges: nothing was declared dead in them", st.GCsWithoutRanges))
	}
	if st.CorruptRangeEvents > 0 {
		n = append(n, fmt.Sprintf("%d range events were impossible (overlapping or zero-length ranges, seen where a trace was cut) and were dropped", st.CorruptRangeEvents))
	}
	if st.SweptByBackgroundGC > 0 {
		n = append(n, fmt.Sprintf("%d objects died in a background GC's sweep of gen0/gen1, seen when a new sample reused their address (the runtime reports no ranges for that sweep)", st.SweptByBackgroundGC))
	}
	if c := st.Contradictions.Total(); c > 0 {
		n = append(n, fmt.Sprintf("%d contradictions in the replay (%+v): lost events or an unexpected runtime behaviour", c, st.Contradictions))
	}
	if st.DecodeErrors > 0 {
		n = append(n, fmt.Sprintf("%d events could not be decoded (first: %s)", st.DecodeErrors, st.FirstDecodeError))
	}
	return n
}

// WriteHeapJSON writes the document as one indented JSON value.
func WriteHeapJSON(w io.Writer, d *HeapDocument) error {
	return writeJSON(w, d, true)
}

// WriteHeapText writes the human report: totals, per type, per site, the
// age-at-death histogram and the notes. top limits the rows per table (0:
// all).
func WriteHeapText(w io.Writer, d *HeapDocument, top int) error {
	var b strings.Builder
	if l := d.PartialLine(); l != "" {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "%s: %d GCs, %d sampled objects followed (%d dead, %d alive at end", d.Source, d.GCs, d.TrackedObjects, d.Dead, d.AliveAtEnd)
	if d.Limits.Evicted > 0 {
		fmt.Fprintf(&b, ", %d evicted by the reservoir", d.Limits.Evicted)
	}
	fmt.Fprintf(&b, "), %d moves replayed", d.Remapped)
	if d.Untracked > 0 {
		fmt.Fprintf(&b, ", %d samples untracked", d.Untracked)
	}
	b.WriteString("\n")
	if d.MovementEvents {
		fmt.Fprintf(&b, "movement data: %d range events (%d moved, %d surviving ranges); contradictions: %d\n",
			d.RangeEvents, d.MovedRanges, d.SurvivingRanges, d.Contradictions.Total)
	}
	if len(d.Types) == 0 {
		for _, n := range d.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(key string, g HeapTypeJSON) {
		fmt.Fprintf(tw, "%d\t%s\t%.1f\t%.1f\t%.1f\t%d\t%s\t %s\n", g.Sampled, heapHuman(g.EstBytes),
			g.SurvivedOneGCPct, g.ReachedGen2Pct, g.DiedInGen2Pct, g.AliveAtEnd, heapHuman(g.EstLiveBytesAtEnd), key)
	}
	fmt.Fprintf(tw, "sampled\test bytes\tsurvive 1 GC %%\treach gen2 %%\tdie in gen2 %%\talive at end\test live\t type\n")
	for i, t := range d.Types {
		if top > 0 && i >= top {
			fmt.Fprintf(tw, "\t\t\t\t\t\t\t … %d more types\n", len(d.Types)-top)
			break
		}
		row(t.Type, t)
	}
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "sampled\test bytes\tsurvive 1 GC %%\treach gen2 %%\tdie in gen2 %%\talive at end\test live\t allocation site\n")
	for i, s := range d.Sites {
		if top > 0 && i >= top {
			fmt.Fprintf(tw, "\t\t\t\t\t\t\t … %d more sites\n", len(d.Sites)-top)
			break
		}
		row(s.Site, s.HeapTypeJSON)
	}
	tw.Flush()
	if len(d.AgeAtDeath) > 0 {
		b.WriteString("\nage at death (GCs since allocation)\n")
		maxN := 0
		for _, a := range d.AgeAtDeath {
			maxN = max(maxN, a.Objects)
		}
		for _, a := range d.AgeAtDeath {
			label := fmt.Sprintf("%d", a.MinGCs)
			switch {
			case a.MaxGCs == 0:
				label += "+"
			case a.MaxGCs != a.MinGCs:
				label = fmt.Sprintf("%d-%d", a.MinGCs, a.MaxGCs)
			}
			bar := 0
			if maxN > 0 {
				bar = a.Objects * 40 / maxN
			}
			fmt.Fprintf(&b, "  %8s %8d %s\n", label, a.Objects, strings.Repeat("#", bar))
		}
	}
	b.WriteString("\npercentages are over sampled objects a GC has decided (dead, or alive after a GC of their generation)\n")
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func heapHuman(b float64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.1f GB", b/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}
