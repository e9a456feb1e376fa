package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/clrspy/clrspy/gcpause"
)

// GCDocument is the JSON form of a GC analysis (clrspy gc --json).
type GCDocument struct {
	Input
	Summary     gcpause.Summary         `json:"summary"`
	GCs         []gcpause.GCRow         `json:"gcs"`
	Suspensions []gcpause.SuspensionRow `json:"suspensions"`
	Histogram   []HistogramRow          `json:"histogram"`
}

// HistogramRow is one pause histogram bucket; HiMS 0 means open-ended.
type HistogramRow struct {
	LoMS  float64 `json:"lo_ms"`
	HiMS  float64 `json:"hi_ms"`
	Count int     `json:"count"`
}

// NewGCDocument builds the JSON document of a result.
func NewGCDocument(in Input, res *gcpause.Result) *GCDocument {
	d := &GCDocument{Input: in, GCs: []gcpause.GCRow{}, Suspensions: []gcpause.SuspensionRow{}, Summary: gcpause.NewSummary(res)}
	for _, g := range res.GCs {
		d.GCs = append(d.GCs, gcpause.NewGCRow(g))
	}
	for _, s := range res.Suspensions {
		row := gcpause.NewSuspensionRow(s)
		d.Suspensions = append(d.Suspensions, row)
	}
	h := &res.All.Histogram
	for i, n := range h.Counts {
		lo, hi := h.Bucket(i)
		d.Histogram = append(d.Histogram, HistogramRow{LoMS: ms(lo), HiMS: ms(hi), Count: int(n)})
	}
	return d
}

// WriteGCJSON writes the document, indented.
func WriteGCJSON(w io.Writer, in Input, res *gcpause.Result) error {
	return WriteGCJSONSpooled(w, in, res, nil)
}

// WriteGCJSONSpooled writes the document of a bounded analysis: the rows
// sp holds (the GCs the analyzer retired) come first, then res.GCs. The
// bytes are those WriteGCJSON would write for the whole list.
func WriteGCJSONSpooled(w io.Writer, in Input, res *gcpause.Result, sp *GCSpool) error {
	return WriteGCJSONHits(w, in, res, sp, nil)
}

// hitsOf is the requests_hit value of GC n (nil without request events).
func hitsOf(hits map[uint32]int64, n uint32) *int64 {
	if hits == nil {
		return nil
	}
	v := hits[n]
	return &v
}

// WriteGCJSONHits is WriteGCJSONSpooled with, when hits is not nil (the
// stream carried request events), each row's requests_hit: the requests
// the GC's pause hit, by GC number (package requests' GC damage).
func WriteGCJSONHits(w io.Writer, in Input, res *gcpause.Result, sp *GCSpool, hits map[uint32]int64) error {
	d := NewGCDocument(in, res)
	for i := range d.GCs {
		d.GCs[i].RequestsHit = hitsOf(hits, d.GCs[i].Number)
	}
	if sp.Len() == 0 {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(d)
	}
	// The document without rows, split where they go; each row indented
	// as the encoder indents an element of "gcs".
	rows := d.GCs
	d.GCs = []gcpause.GCRow{}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	const empty = `"gcs": []`
	i := bytes.Index(buf.Bytes(), []byte(empty))
	if i < 0 {
		return fmt.Errorf("report: no %s in the GC document", empty)
	}
	bw := bufio.NewWriter(w)
	bw.Write(buf.Bytes()[:i])
	bw.WriteString(`"gcs": [`)
	n := 0
	elem := func(b []byte) {
		if n > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		bw.Write(b)
		n++
	}
	spooled := elem
	var rerr error
	if hits != nil {
		// The spooled rows were written before the requests they hit had
		// all ended: each gains its count now.
		spooled = func(b []byte) {
			var r gcpause.GCRow
			if err := json.Unmarshal(b, &r); err != nil {
				rerr = cmp.Or(rerr, err)
				return
			}
			r.RequestsHit = hitsOf(hits, r.Number)
			b, err := json.MarshalIndent(r, "    ", "  ")
			if err != nil {
				rerr = cmp.Or(rerr, err)
				return
			}
			elem(b)
		}
	}
	if err := sp.each(spooled); err != nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("report: a spooled GC row: %w", rerr)
	}
	for _, r := range rows {
		b, err := json.MarshalIndent(r, "    ", "  ")
		if err != nil {
			return err
		}
		elem(b)
	}
	bw.WriteString("\n  ]")
	bw.Write(buf.Bytes()[i+len(empty):])
	return bw.Flush()
}

// gcCSVHeader is PerfView's GCStats CSV column set (ToCsv).
var gcCSVHeader = []string{"Num", "PauseStart", "Reason", "Gen", "PauseMSec", "Time In GC", "AllocMB",
	"Alloc MB/sec", "PeakMB", "AfterMB", "Peak/After Ratio", "PromotedMB", "Gen0 Size", "Gen0 Surv%",
	"Gen0 Frag%", "Gen1 Size", "Gen1 Surv%", "Gen1 Frag%", "Gen2 Size", "Gen2 Surv%", "Gen2 Frag%",
	"LOH Size", "LOH Surv%", "LOH Frag%", "FinalizeSurviveMB", "Pinned Object", "% Pause Time", "Suspend Msec",
	// clrspy's: the pause by the runtime's definition, and whether the
	// GC's start was seen (false: PauseMSec is a lower bound).
	"PauseRuntimeMSec", "StartSeen"}

// WriteGCCSV writes one row per complete GC with PerfView's columns, then
// clrspy's PauseRuntimeMSec and StartSeen. Unknown values are empty. "Time In GC" is the GC's work time (GCStart to
// GCEnd) as a share of the time since the previous GC's pause ended — clrspy
// has no CPU data, so this replaces PerfView's CPU-based figure.
func WriteGCCSV(w io.Writer, res *gcpause.Result) error {
	return WriteGCCSVSpooled(w, res, nil)
}

// WriteGCCSVSpooled is WriteGCCSV for a bounded analysis: sp's rows (the
// GCs the analyzer retired), then those of res.GCs.
func WriteGCCSVSpooled(w io.Writer, res *gcpause.Result, sp *GCSpool) error {
	return WriteGCCSVHits(w, res, sp, nil)
}

// WriteGCCSVHits is WriteGCCSVSpooled with, when hits is not nil (the
// stream carried request events), one more column, RequestsHit: the
// requests each GC's pause hit.
func WriteGCCSVHits(w io.Writer, res *gcpause.Result, sp *GCSpool, hits map[uint32]int64) error {
	cw := csv.NewWriter(w)
	header := gcCSVHeader
	if hits != nil {
		header = append(slices.Clip(header), "RequestsHit")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	cw.Flush()
	if hits == nil {
		var werr error
		if err := sp.each(func(b []byte) {
			if werr == nil {
				_, werr = w.Write(b)
			}
		}); err != nil {
			return err
		}
		if werr != nil {
			return fmt.Errorf("writing CSV: %w", werr)
		}
	} else if sp.Len() > 0 {
		// The spooled rows gain their count as they are copied.
		pr, pw := io.Pipe()
		go func() {
			pw.CloseWithError(sp.each(func(b []byte) { pw.Write(b) }))
		}()
		cr := csv.NewReader(pr)
		for {
			rec, err := cr.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				pr.CloseWithError(err)
				return fmt.Errorf("reading spooled GC rows: %w", err)
			}
			if err := cw.Write(append(rec, csvHits(hits, rec[0]))); err != nil {
				pr.CloseWithError(err)
				return err
			}
		}
	}
	var rows csvRows
	if sp != nil {
		rows = sp.rows
	}
	for _, g := range res.GCs {
		if row := rows.row(g); row != nil {
			if hits != nil {
				row = append(row, strconv.FormatInt(hits[g.Number], 10))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("writing CSV: %w", err)
	}
	return nil
}

// csvHits is the RequestsHit column of the GC numbered num.
func csvHits(hits map[uint32]int64, num string) string {
	n, _ := strconv.ParseUint(num, 10, 32)
	return strconv.FormatInt(hits[uint32(n)], 10)
}

// csvRows makes the CSV rows of GCs in start order; the time since the
// previous complete GC's pause carries from row to row.
type csvRows struct{ prevEnd int64 }

// row is g's CSV row, nil for an incomplete GC (not listed).
func (c *csvRows) row(g *gcpause.GC) []string {
	if !g.Complete {
		return nil
	}
	f := func(v float64) string {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	since := g.PauseStartNanos - c.prevEnd
	c.prevEnd = g.PauseEndNanos
	timeInGC, rate := -1.0, -1.0
	if since > 0 && g.DurationNanos >= 0 {
		timeInGC = float64(g.DurationNanos) * 100 / float64(since+g.PauseNanos)
	}
	if since > 0 && g.Gen0AllocMB() >= 0 {
		rate = g.Gen0AllocMB() * 1e9 / float64(since)
	}
	ratio := -1.0
	if p, a := g.HeapSizePeakMB(), g.HeapSizeAfterMB(); p >= 0 && a > 0 {
		ratio = p / a
	}
	fin, pinned := "", ""
	if g.HasHeapStats {
		fin = f(float64(g.HeapStats.FinalizationPromotedSize) / 1e6)
		pinned = strconv.FormatUint(uint64(g.HeapStats.PinnedObjectCount), 10)
	}
	row := []string{strconv.FormatUint(uint64(g.Number), 10), f(ms(g.PauseStartNanos)), g.Reason.String(),
		g.GenerationName(), f(ms(g.PauseNanos)), f(timeInGC), f(g.Gen0AllocMB()), f(rate),
		f(g.HeapSizePeakMB()), f(g.HeapSizeAfterMB()), f(ratio), f(g.PromotedMB())}
	for gen := 0; gen < 4; gen++ {
		row = append(row, f(g.GenSizeAfterMB(gen)), f(g.SurvivalPercent(gen)), f(g.FragmentationPercent(gen)))
	}
	rt := -1.0
	if g.PauseRuntimeNanos >= 0 {
		rt = ms(g.PauseRuntimeNanos)
	}
	return append(row, fin, pinned, f(g.PausePercentSinceLastGC), f(ms(g.SuspendNanos)), f(rt), strconv.FormatBool(g.StartSeen))
}

// WriteGC writes `gc`'s report as format: "json", "csv" (the rows from
// the spool sp) or text; hits are the requests each GC hit (nil: no
// request events).
func WriteGC(w io.Writer, format string, in Input, res *gcpause.Result, sp *GCSpool, hits map[uint32]int64) error {
	switch format {
	case "json":
		return WriteGCJSONHits(w, in, res, sp, hits)
	case "csv":
		return WriteGCCSVHits(w, res, sp, hits)
	}
	return WriteGCTextHits(w, in, res, hits)
}
