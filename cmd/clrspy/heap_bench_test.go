package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clrspy/clrspy/gcpause"
	"github.com/clrspy/clrspy/internal/workload"
	"github.com/clrspy/clrspy/report"
)

// runClrspy runs one clrspy command line in-process; a launched program's
// stdout goes to the file childOut.
func runClrspy(tb testing.TB, childOut string, args ...string) {
	tb.Helper()
	out, err := os.Create(childOut)
	if err != nil {
		tb.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = out
	root := newRootCmd()
	root.SetArgs(args)
	err = root.Execute()
	os.Stdout = saved
	out.Close()
	if err != nil {
		tb.Fatalf("clrspy %v: %v", args, err)
	}
}

// BenchmarkHeapMovementPause measures what the GCHeapSurvivalAndMovement
// keyword costs: the churn workload recorded for 3 s with the gc profile and
// then with the movement profile, alternating three times in the same run; gen0 pauses from
// `clrspy gc` on each. Reports mean and max gen0 pause of both and their
// ratios.
func BenchmarkHeapMovementPause(b *testing.B) {
	argv := workload.Argv(b, "churn", "seconds=3")
	dir := b.TempDir()
	// gen0 records one run and returns its gen0 pause statistics and the
	// objects the workload allocated (its throughput).
	gen0 := func(profile string) (gcpause.GenSummary, float64) {
		trace := filepath.Join(dir, profile+".nettrace")
		out := filepath.Join(dir, profile+".json")
		child := filepath.Join(dir, profile+".out")
		runClrspy(b, child, append([]string{"record", "--profile", profile, "-o", trace, "--"}, argv...)...)
		runClrspy(b, os.DevNull, "gc", "--json", "-o", out, trace)
		res, err := os.ReadFile(child)
		if err != nil {
			b.Fatal(err)
		}
		wr, err := workload.ParseResult(res)
		if err != nil {
			b.Fatal(err)
		}
		data, err := os.ReadFile(out)
		if err != nil {
			b.Fatal(err)
		}
		var d report.GCDocument
		if err := json.Unmarshal(data, &d); err != nil {
			b.Fatal(err)
		}
		g := d.Summary.ByGeneration["gen0"]
		if g.Count == 0 {
			b.Fatalf("%s: no gen0 GC", profile)
		}
		return g, wr.Float("objects")
	}
	// The machine is shared: alternate the two settings three times and
	// keep the medians so one noisy run does not decide the ratio.
	var offMean, onMean, offMax, onMax, thr []float64
	for range b.N {
		for range 3 {
			off, offObjs := gen0("gc")
			on, onObjs := gen0("movement")
			offMean, onMean = append(offMean, off.MeanPauseMS), append(onMean, on.MeanPauseMS)
			offMax, onMax = append(offMax, off.MaxPauseMS), append(onMax, on.MaxPauseMS)
			thr = append(thr, onObjs/offObjs)
		}
	}
	b.ReportMetric(median(thr), "throughput-ratio")
	b.ReportMetric(median(offMean), "gen0-mean-ms-without")
	b.ReportMetric(median(onMean), "gen0-mean-ms-with")
	b.ReportMetric(median(offMax), "gen0-max-ms-without")
	b.ReportMetric(median(onMax), "gen0-max-ms-with")
	b.ReportMetric(median(onMean)/median(offMean), "mean-ratio")
	b.ReportMetric(median(onMax)/median(offMax), "max-ratio")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
