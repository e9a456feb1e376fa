package web

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/report"
)

// gcRows is a page's GC table as one JSON object per GC, by GC number:
// the live view sends rows in the order GCs complete, a file's page in
// start order.
func gcRows(t *testing.T, c *report.GCColumns) map[uint32]string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var cols map[string]json.RawMessage
	if err := json.Unmarshal(b, &cols); err != nil {
		t.Fatal(err)
	}
	var ns []uint32
	json.Unmarshal(cols["n"], &ns)
	keys := make([]string, 0, len(cols))
	for k := range cols {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rows := make(map[uint32]string, len(ns))
	for i, n := range ns {
		var sb strings.Builder
		for _, k := range keys {
			var flat []json.RawMessage
			if json.Unmarshal(cols[k], &flat) != nil || len(flat) != len(ns) {
				// Per-generation columns: an array of columns.
				var nested [][]json.RawMessage
				if json.Unmarshal(cols[k], &nested) != nil {
					continue
				}
				for g, col := range nested {
					if i < len(col) {
						fmt.Fprintf(&sb, "%s%d=%s ", k, g, col[i])
					}
				}
				continue
			}
			fmt.Fprintf(&sb, "%s=%s ", k, flat[i])
		}
		rows[n] = sb.String()
	}
	return rows
}

// TestLiveModelEqualsFile: every fixture read once through the file path
// (the report page's analyses) and once through the live model (the
// monitor behind the live page and serve, fed the same events): the GC
// rows, the summary (counts, stopped time, percentiles, suspensions by
// reason) and the lock table (owners and waiting stacks) are equal: the
// live page renders package gcpause's rollup and package locks' result,
// as the file's page does, not second copies.
func TestLiveModelEqualsFile(t *testing.T) {
	for _, name := range tracetest.Fixtures(t) {
		if strings.HasSuffix(name, ".truncated.nettrace") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			hub, _ := hubOver(t, name)
			if _, err := hub.Run(); err != nil {
				t.Fatal(err)
			}
			live, off := hub.Page(), offline(t, name)
			lr, or := gcRows(t, live.GCs), gcRows(t, off.GCs)
			if len(lr) != len(or) {
				t.Errorf("%d live GC rows, %d in the file's page", len(lr), len(or))
			}
			bad := 0
			for n, want := range or {
				if got := lr[n]; got != want && bad < 3 {
					bad++
					t.Errorf("GC %d:\nlive %s\nfile %s", n, got, want)
				}
			}
			ls, fs := live.Summary, off.Summary
			if ls == nil || fs == nil {
				t.Fatalf("summary live %v, file %v", ls != nil, fs != nil)
			}
			type counts struct {
				GCs, Started, Incomplete, Unseen int
				ByType                           string
				Max, Total, Suspend              float64
				P50, P99, P999, Mean, Percent    float64
			}
			c := func(s *report.GCSummary) counts {
				return counts{s.GCCount, s.GCsStarted, s.Incomplete, s.StartUnseen, fmt.Sprint(s.ByType), s.MaxPauseMS, s.TotalPauseMS, s.TotalSuspendMS,
					s.P50MS, s.P99MS, s.P999MS, s.MeanPauseMS, s.PauseTimePercent}
			}
			if c(ls) != c(fs) {
				t.Errorf("summary:\nlive %+v\nfile %+v", c(ls), c(fs))
			}
			for g, want := range fs.ByGeneration {
				got := ls.ByGeneration[g]
				if got != want {
					t.Errorf("%s: live %+v, file %+v", g, got, want)
				}
			}
			if got, want := fmt.Sprintf("%+v", ls.SuspensionsByReason), fmt.Sprintf("%+v", fs.SuspensionsByReason); got != want {
				t.Errorf("suspensions by reason:\nlive %s\nfile %s", got, want)
			}
			if got, want := lockTable(live.Locks), lockTable(off.Locks); got != want {
				t.Errorf("locks:\nlive %s\nfile %s", got, want)
			}
		})
	}
}

func lockTable(l *report.PageLocks) string {
	if l == nil {
		return "none"
	}
	b, _ := json.Marshal(l)
	return string(b)
}
