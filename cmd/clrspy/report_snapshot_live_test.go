package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// pageDataRE finds the data a report page embeds.
var pageDataRE = regexp.MustCompile(`(?s)<script id="clrspy-data" type="application/json">(.*?)</script>`)

// TestReportSnapshotLargeLive: the page of a million-object heap stays
// small. The graph workload builds 500,000 GraphItem, each with a
// GraphLeaf, under its static holder; clrspy snapshot --save records the
// heap dump and clrspy report draws it. The section's figures
// are the workload's own (objects per type, the bytes it allocated under
// the holder), and the page, the whole report included, is under 1 MB:
// the tree sums the million small objects by type and the tables hold
// the top types.
func TestReportSnapshotLargeLive(t *testing.T) {
	const items = 500000
	p := workload.Start(t, nil, "graph", "items="+strconv.Itoa(items))
	waitStderr(t, p, "graph ready")
	dir := t.TempDir()
	trace, page := filepath.Join(dir, "big.nettrace"), filepath.Join(dir, "big.html")
	// snapshot --save writes the events clrspy record --profile gcdump
	// records (the same provider and keywords), but ends when the dump's
	// GC has (a fixed --duration could end a loaded machine's dump
	// early), with its 1 GB buffer.
	if _, stderr, err := runCaptured(t, "snapshot", "--pid", strconv.Itoa(p.Pid), "--save", trace, "-o", filepath.Join(dir, "snapshot.txt")); err != nil {
		t.Fatalf("clrspy snapshot: %v\n%s", err, stderr)
	}
	p.Stdin("exit\n")
	res, err := p.Wait(30 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var holderBytes int64
	if err := res.Get("holderBytes", &holderBytes); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, stderr, err := runCaptured(t, "report", trace, "-o", page); err != nil {
		t.Fatalf("clrspy report: %v\n%s", err, stderr)
	}
	took := time.Since(start)
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	m := pageDataRE.FindSubmatch(html)
	if m == nil {
		t.Fatal("no page data")
	}
	var doc struct {
		Snapshot *report.PageSnapshot `json:"snapshot"`
	}
	if err := json.Unmarshal(m[1], &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Snapshot
	if s == nil {
		t.Fatal("no snapshot section")
	}
	section, _ := json.Marshal(s)
	t.Logf("%d objects, %d bytes; page %d bytes, snapshot section %d bytes, %d tree nodes; report took %v", s.Objects, s.Bytes, len(html), len(section), len(s.Tree.Depth), took)
	if !s.Complete || s.Objects < 2*items {
		t.Fatalf("snapshot: complete %v (%s), %d objects", s.Complete, s.Note, s.Objects)
	}
	types := map[string]report.SnapshotTypeJSON{}
	for _, ty := range s.Types {
		types[ty.Type] = ty
	}
	if types["Workload.GraphItem"].Count != items || types["Workload.GraphLeaf"].Count != items {
		t.Errorf("GraphItem %d, GraphLeaf %d objects; the workload made %d of each", types["Workload.GraphItem"].Count, types["Workload.GraphLeaf"].Count, items)
	}
	if h := types["Workload.GraphHolder"]; h.RetainedBytes != uint64(holderBytes) {
		t.Errorf("GraphHolder retains %d bytes, the workload allocated %d under it", h.RetainedBytes, holderBytes)
	}
	tr := s.Tree
	if len(tr.Depth) < 4 || tr.Names[tr.Type[1]] != "Workload.GraphHolder" || tr.Kind[3] != report.SnapNodeGroup || tr.Count[3] != items {
		t.Errorf("tree: %d nodes; under the root %s, then %d×%s (kind %d)", len(tr.Depth), tr.Names[tr.Type[1]], tr.Count[3], tr.Names[tr.Type[3]], tr.Kind[3])
	}
	if len(html) > 1<<20 || len(section) > 256<<10 {
		t.Errorf("page %d bytes, its snapshot section %d: a million objects must not make the page large", len(html), len(section))
	}
}
