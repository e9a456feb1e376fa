package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/clrspy/clrspy/internal/procfs"
	"github.com/clrspy/clrspy/memory"
)

// MemoryDocument is `clrspy memory --json`: the process's memory split so
// the parts add up to rss_bytes, its cgroup's limit, and with --duration
// the split over time.
type MemoryDocument struct {
	Input
	Pid       int    `json:"pid"`
	Process   string `json:"process"`
	RssBytes  uint64 `json:"rss_bytes"`
	PssBytes  uint64 `json:"pss_bytes"`
	UssBytes  uint64 `json:"uss_bytes"`
	SwapBytes uint64 `json:"swap_bytes"`
	// Parts add up to RssBytes (their pss_bytes to PssBytes, uss_bytes to
	// UssBytes).
	Parts  []MemoryPartJSON  `json:"parts"`
	Images []MemoryImageJSON `json:"images"`
	// GCRange is the GC's reservation (null when none was found).
	GCRange  *GCRangeJSON      `json:"gc_range"`
	Cgroup   *MemoryCgroupJSON `json:"cgroup"`
	Timeline []MemoryPointJSON `json:"timeline"`
	// Growth is each part's change over the timeline (kind "rss": the
	// whole); empty with one sample.
	Growth    []MemoryGrowthJSON `json:"growth"`
	Judgement string             `json:"judgement"`
	// Runtime is what the runtime said over the session beside the
	// sampling; null without one (not a .NET process, --runtime=false).
	Runtime *MemoryRuntimeJSON `json:"runtime"`
	// Native is the sampled native allocations (--native; absent
	// without it).
	Native *MemoryNativeJSON `json:"native,omitempty"`
}

// MemoryNativeJSON is memory --native's estimate: by stack, bytes still
// allocated at the end and bytes allocated over the run, most first.
type MemoryNativeJSON struct {
	// SampleBytes is the mean sampling interval in bytes.
	SampleBytes int64                   `json:"sample_bytes"`
	Outstanding []MemoryNativeStackJSON `json:"outstanding"`
	Allocated   []MemoryNativeStackJSON `json:"allocated"`
}

// MemoryNativeStackJSON is one stack's estimate: frames' names leaf first
// (managed and native), bytes and allocations.
type MemoryNativeStackJSON struct {
	Frames []string `json:"frames"`
	Bytes  int64    `json:"bytes"`
	Count  int64    `json:"count"`
}

// NewMemoryNative converts Native's result.
func NewMemoryNative(r *memory.NativeResult) *MemoryNativeJSON {
	conv := func(l []memory.NativeStack) []MemoryNativeStackJSON {
		out := make([]MemoryNativeStackJSON, 0, len(l))
		for _, s := range l {
			out = append(out, MemoryNativeStackJSON{Frames: s.Frames, Bytes: int64(math.Round(s.Bytes)), Count: int64(math.Round(s.Count))})
		}
		return out
	}
	return &MemoryNativeJSON{SampleBytes: r.SampleBytes, Outstanding: conv(r.Outstanding), Allocated: conv(r.Allocated)}
}

// MemoryRuntimeJSON is what the runtime said of its heap: its counters'
// last values (null before the first, a second into the session), the
// generations' sizes after the last GC in the session (null without a
// GC), and how many heap addresses it reported.
type MemoryRuntimeJSON struct {
	GCHeapSizeBytes  *float64               `json:"gc_heap_size_bytes"`
	GCCommittedBytes *float64               `json:"gc_committed_bytes"`
	GCs              int                    `json:"gcs"`
	Generations      *MemoryGenerationsJSON `json:"generations"`
	HeapAddresses    int                    `json:"heap_addresses"`
}

// MemoryGenerationsJSON are GCHeapStats' sizes.
type MemoryGenerationsJSON struct {
	Gen0 uint64 `json:"gen0_bytes"`
	Gen1 uint64 `json:"gen1_bytes"`
	Gen2 uint64 `json:"gen2_bytes"`
	LOH  uint64 `json:"loh_bytes"`
	POH  uint64 `json:"poh_bytes"`
}

// MemoryPartJSON is one part of the split.
type MemoryPartJSON struct {
	Kind     string `json:"kind"`
	Bytes    uint64 `json:"bytes"`
	PssBytes uint64 `json:"pss_bytes"`
	UssBytes uint64 `json:"uss_bytes"`
	Mappings int    `json:"mappings"`
}

// MemoryImageJSON is one mapped file's resident bytes.
type MemoryImageJSON struct {
	Path  string `json:"path"`
	Bytes uint64 `json:"bytes"`
}

// GCRangeJSON bounds the GC's reservation: bookkeeping from start, regions
// from regions_start to end; found_by "runtime" or "layout".
type GCRangeJSON struct {
	Start        string `json:"start"`
	RegionsStart string `json:"regions_start"`
	End          string `json:"end"`
	FoundBy      string `json:"found_by"`
}

// MemoryCgroupJSON is the memory cgroup's limit and usage.
type MemoryCgroupJSON struct {
	Version int    `json:"version"`
	Path    string `json:"path"`
	// LimitPath is the cgroup whose limit applies (the process's or an
	// ancestor's); limit_bytes and headroom_bytes are null without one.
	LimitPath     *string           `json:"limit_path"`
	LimitBytes    *uint64           `json:"limit_bytes"`
	UsageBytes    uint64            `json:"usage_bytes"`
	HeadroomBytes *uint64           `json:"headroom_bytes"`
	OOMKills      *int64            `json:"oom_kills"`
	Stat          map[string]uint64 `json:"stat"`
}

// MemoryPointJSON is one sample of the timeline.
type MemoryPointJSON struct {
	AtMs     float64          `json:"at_ms"`
	RssBytes uint64           `json:"rss_bytes"`
	PssBytes uint64           `json:"pss_bytes"`
	Parts    []MemoryPartJSON `json:"parts"`
	// CgroupUsageBytes is the memory cgroup's usage then (null: none).
	CgroupUsageBytes *uint64 `json:"cgroup_usage_bytes"`
}

// MemoryGrowthJSON is a part's change over the timeline.
type MemoryGrowthJSON struct {
	Kind        string  `json:"kind"`
	DeltaBytes  int64   `json:"delta_bytes"`
	BytesPerSec float64 `json:"bytes_per_sec"`
}

func memoryParts(s *memory.Split) []MemoryPartJSON {
	out := make([]MemoryPartJSON, 0, len(s.Parts))
	for _, p := range s.Parts {
		out = append(out, MemoryPartJSON{Kind: string(p.Kind), Bytes: p.Bytes, PssBytes: p.Pss, UssBytes: p.Uss, Mappings: p.Mappings})
	}
	return out
}

// NewMemoryDocument describes the samples ss of pid (the last is the
// split reported) and its cgroup (nil: none found).
func NewMemoryDocument(in Input, pid int, process string, ss []memory.Sample, cg *procfs.CgroupMemory) *MemoryDocument {
	last := &ss[len(ss)-1].Split
	d := &MemoryDocument{Input: in, Pid: pid, Process: process, RssBytes: last.Rss, PssBytes: last.Pss, UssBytes: last.Uss, SwapBytes: last.Swap,
		Parts: memoryParts(last), Images: []MemoryImageJSON{}, Timeline: []MemoryPointJSON{}, Growth: []MemoryGrowthJSON{}}
	for _, im := range last.Images {
		d.Images = append(d.Images, MemoryImageJSON{Path: im.Path, Bytes: im.Bytes})
	}
	if last.GCEnd != 0 {
		d.GCRange = &GCRangeJSON{Start: hex(last.GCStart), RegionsStart: hex(last.GCRegions), End: hex(last.GCEnd), FoundBy: last.GCFoundBy}
	}
	var limit, usage uint64
	if cg != nil {
		c := &MemoryCgroupJSON{Version: cg.Version, Path: cg.Dir, UsageBytes: cg.Usage, Stat: cg.Stat}
		if c.Stat == nil {
			c.Stat = map[string]uint64{}
		}
		if cg.Limit > 0 {
			l, h, p := cg.Limit, cg.Headroom(), cg.LimitDir
			c.LimitBytes, c.HeadroomBytes, c.LimitPath = &l, &h, &p
		}
		if cg.OOMKills >= 0 {
			k := cg.OOMKills
			c.OOMKills = &k
		}
		d.Cgroup = c
		limit, usage = cg.Limit, cg.Usage
	}
	if len(ss) > 1 {
		for _, s := range ss {
			p := MemoryPointJSON{AtMs: float64(s.AtNs) / 1e6, RssBytes: s.Split.Rss, PssBytes: s.Split.Pss, Parts: memoryParts(&s.Split)}
			if s.CgroupUsage > 0 {
				u := s.CgroupUsage
				p.CgroupUsageBytes = &u
			}
			d.Timeline = append(d.Timeline, p)
		}
		for _, g := range memory.Growths(ss) {
			k := string(g.Kind)
			if k == "" {
				k = "rss"
			}
			d.Growth = append(d.Growth, MemoryGrowthJSON{Kind: k, DeltaBytes: g.Delta, BytesPerSec: g.PerSec})
		}
	}
	d.Judgement = memory.Judge(ss, limit, usage)
	return d
}

func hex(v uint64) string { return fmt.Sprintf("0x%x", v) }

// WriteMemoryJSON writes d as one JSON document.
func WriteMemoryJSON(w io.Writer, d *MemoryDocument) error {
	return writeJSON(w, d, true)
}

// WriteMemoryText writes d for a terminal; images lists the top images
// mapped files.
func WriteMemoryText(w io.Writer, d *MemoryDocument, images int) error {
	var b strings.Builder
	if l := d.Input.PartialLine(); l != "" {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, "pid %d (%s): RSS %s, PSS %s, USS %s, swap %s\n", d.Pid, d.Process, mib(d.RssBytes), mib(d.PssBytes), mib(d.UssBytes), mib(d.SwapBytes))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  part\tRSS\t%\tPSS\tUSS\tmappings\t")
	for _, p := range d.Parts {
		pct := 0.0
		if d.RssBytes > 0 {
			pct = 100 * float64(p.Bytes) / float64(d.RssBytes)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%.1f\t%s\t%s\t%d\t\n", memory.Kind(p.Kind).Label(), mib(p.Bytes), pct, mib(p.PssBytes), mib(p.UssBytes), p.Mappings)
	}
	tw.Flush()
	if g := d.GCRange; g != nil {
		fmt.Fprintf(&b, "GC reservation %s-%s, regions from %s (found by %s)\n", g.Start, g.End, g.RegionsStart, g.FoundBy)
	} else {
		b.WriteString("GC reservation: not found (the GC heap is counted as other)\n")
	}
	if r := d.Runtime; r != nil {
		b.WriteString("runtime says:")
		if r.GCHeapSizeBytes != nil {
			fmt.Fprintf(&b, " GC heap size %s", mib(uint64(*r.GCHeapSizeBytes)))
		}
		if r.GCCommittedBytes != nil {
			fmt.Fprintf(&b, ", committed %s", mib(uint64(*r.GCCommittedBytes)))
		}
		if g := r.Generations; g != nil {
			fmt.Fprintf(&b, "; after the last of %d GCs gen0 %s, gen1 %s, gen2 %s, LOH %s, POH %s", r.GCs,
				mib(g.Gen0), mib(g.Gen1), mib(g.Gen2), mib(g.LOH), mib(g.POH))
		}
		if r.GCHeapSizeBytes == nil && r.Generations == nil {
			b.WriteString(" nothing yet (its counters publish every second)")
		}
		b.WriteString("\n")
	}
	if c := d.Cgroup; c != nil {
		fmt.Fprintf(&b, "cgroup v%d %s: ", c.Version, c.Path)
		if c.LimitBytes != nil {
			fmt.Fprintf(&b, "limit %s", mib(*c.LimitBytes))
			if *c.LimitPath != c.Path {
				fmt.Fprintf(&b, " (set at %s)", *c.LimitPath)
			}
			fmt.Fprintf(&b, ", usage %s, headroom %s", mib(c.UsageBytes), mib(*c.HeadroomBytes))
		} else {
			fmt.Fprintf(&b, "no limit, usage %s", mib(c.UsageBytes))
		}
		if c.OOMKills != nil {
			fmt.Fprintf(&b, ", OOM kills %d", *c.OOMKills)
		}
		b.WriteString("\n")
	} else {
		b.WriteString("cgroup: no memory cgroup found\n")
	}
	if images > 0 && len(d.Images) > 0 {
		fmt.Fprintf(&b, "mapped images (top %d of %d):\n", min(images, len(d.Images)), len(d.Images))
		for i, im := range d.Images {
			if i == images {
				break
			}
			fmt.Fprintf(&b, "  %10s  %s\n", mib(im.Bytes), im.Path)
		}
	}
	if len(d.Timeline) > 0 {
		b.WriteString("timeline (MiB):\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "  t (s)\tRSS\t")
		for _, k := range memory.Kinds {
			fmt.Fprintf(tw, "%s\t", k)
		}
		fmt.Fprintln(tw)
		for _, p := range d.Timeline {
			fmt.Fprintf(tw, "  %.1f\t%.1f\t", p.AtMs/1000, float64(p.RssBytes)/(1<<20))
			for _, q := range p.Parts {
				fmt.Fprintf(tw, "%.1f\t", float64(q.Bytes)/(1<<20))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	fmt.Fprintf(&b, "judgement: %s\n", d.Judgement)
	if n := d.Native; n != nil {
		writeNativeText(&b, n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mib(b uint64) string { return memory.MiB(int64(b)) }

// nativeTextStacks and nativeTextFrames bound the text's native stacks.
const (
	nativeTextStacks = 5
	nativeTextFrames = 12
)

func writeNativeText(b *strings.Builder, n *MemoryNativeJSON) {
	var out, all int64
	for _, s := range n.Outstanding {
		out += s.Bytes
	}
	for _, s := range n.Allocated {
		all += s.Bytes
	}
	every := memory.MiB(n.SampleBytes)
	if n.SampleBytes < 1<<20 {
		every = fmt.Sprintf("%d KiB", n.SampleBytes>>10)
		if n.SampleBytes%1024 != 0 {
			every = fmt.Sprintf("%d bytes", n.SampleBytes)
		}
	}
	fmt.Fprintf(b, "native allocations (sampled every %s on average): %s outstanding, %s allocated (estimates)\n",
		every, memory.MiB(out), memory.MiB(all))
	if len(n.Outstanding) == 0 {
		b.WriteString("  nothing outstanding\n")
	}
	for i, s := range n.Outstanding {
		if i == nativeTextStacks {
			fmt.Fprintf(b, "  ... %d more stacks\n", len(n.Outstanding)-i)
			break
		}
		fmt.Fprintf(b, "  %s in %d blocks:\n", memory.MiB(s.Bytes), s.Count)
		for j, f := range s.Frames {
			if j == nativeTextFrames {
				fmt.Fprintf(b, "      ... %d more frames\n", len(s.Frames)-j)
				break
			}
			fmt.Fprintf(b, "      %s\n", f)
		}
	}
}

// WriteMemory writes `memory`'s report d as format: "json", "pprof" or
// "folded" (the native allocations' every stack, all; spanNs: the run's
// span), or text listing images mapped files.
func WriteMemory(w io.Writer, format string, d *MemoryDocument, all *MemoryNativeJSON, spanNs int64, images int) error {
	switch format {
	case "json":
		return WriteMemoryJSON(w, d)
	case "pprof":
		return WriteMemoryNativePprof(w, all, spanNs, d.Partial)
	case "folded":
		return WriteMemoryNativeFolded(w, all)
	}
	return WriteMemoryText(w, d, images)
}
