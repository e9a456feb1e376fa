package heap

import (
	"compress/gzip"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
)

// heapChurn is the churn workload recorded with allocation sampling and
// movement events (testdata/traces/README.md says how): 3,197 sampled
// objects, up to a few hundred alive at once.
const heapChurn = "heap-churn.nettrace.gz"

// loadedTrace is a trace's events in memory (payloads and stacks copied),
// so many replays cost only the tracker's work.
type loadedTrace struct {
	hdr *nettrace.Header
	evs []nettrace.Event
}

func loadTrace(tb testing.TB, path string) *loadedTrace {
	tb.Helper()
	newReader := nettrace.NewReader
	if strings.HasSuffix(path, ".gz") {
		newReader = func(r io.Reader) (*nettrace.Reader, error) {
			z, err := gzip.NewReader(r)
			if err != nil {
				return nil, err
			}
			return nettrace.NewReader(z)
		}
	}
	r := tracetest.OpenFile(tb, path, newReader)
	lt := &loadedTrace{hdr: r.Header()}
	err := tracetest.ReadAll(tb, r, func(ev *nettrace.Event) {
		e := *ev
		e.Payload, e.Stack = slices.Clone(ev.Payload), slices.Clone(ev.Stack)
		lt.evs = append(lt.evs, e)
	})
	if err != nil {
		tb.Fatal(err)
	}
	return lt
}

// replay runs the events through a tracker with o and returns its result
// and the most objects it followed at once.
func (lt *loadedTrace) replay(tb testing.TB, o Options) (*Result, int) {
	tb.Helper()
	tr := New(lt.hdr, o)
	peak := 0
	for i := range lt.evs {
		tr.Event(&lt.evs[i])
		peak = max(peak, tr.liveN)
	}
	tr.Finish()
	r := tr.Result()
	if err := r.CheckValid(); err != nil {
		tb.Errorf("%+v: %v", o, err)
	}
	return r, peak
}

// estimate is what the reservoir must preserve for one type.
type estimate struct {
	samples, bytes, liveBytes    float64 // estimated
	survived, gen2, diedGen2     float64 // percentages of decided samples
	followed, decided, aliveSeen int
}

func estimates(r *Result) map[string]estimate {
	out := map[string]estimate{}
	for _, g := range Summarize(r, nil).Types {
		out[g.Key] = estimate{g.W.Sampled, g.EstBytes, g.LiveBytes, g.SurvivedOnePct(), g.ReachedGen2Pct(), g.DiedInGen2Pct(),
			g.Sampled, g.Decided, g.AliveAtEnd}
	}
	return out
}

// reservoirCase is a real trace and reservoirs smaller than the most
// objects it keeps alive at once.
type reservoirCase struct {
	name  string
	path  func(testing.TB) string
	sizes []int
}

// reservoirCases are the fixtures' (the compatibility suite adds objver4).
var reservoirCases = []reservoirCase{
	{"heap-churn", func(tb testing.TB) string { return tracetest.Path(tb, heapChurn) }, []int{32, 64, 128}},
	{"heap-alloc", func(tb testing.TB) string { return tracetest.Path(tb, "heap-alloc.nettrace") }, []int{8, 16, 32}},
}

const reservoirSeeds = 16

// TestReservoirEstimates replays real traces with reservoirs of a fraction
// of their live set, under 16 seeds each, against the unbounded replay:
//
//   - the followed set never exceeds the bound, and the reservoir drops
//     samples;
//   - for every type with at least 100 samples, the estimated sample count,
//     bytes allocated and bytes alive at the end, and the survival,
//     promotion and gen2-death percentages are unbiased: the mean over the
//     seeds is within 4 standard errors of the mean (from the runs' own
//     spread) of the truth. A missing or wrong weight is off by the drop
//     rate (50–99 % here), tens of standard errors;
//   - each single run's percentage is within 5 binomial standard errors of
//     the truth over the samples it followed, so no run is wildly off.
//
// With fixed seeds the outcome is deterministic, not flaky. The error table
// is logged (go test -run ReservoirEstimates -v) and copied to
// docs/PERFORMANCE.md.
func TestReservoirEstimates(t *testing.T) {
	for _, c := range reservoirCases {
		t.Run(c.name, func(t *testing.T) {
			lt := loadTrace(t, c.path(t))
			exactRes, peak := lt.replay(t, Options{MaxObjects: -1})
			exact := estimates(exactRes)
			if exactRes.Stats.Evicted != 0 || exactRes.Stats.NotFollowed != 0 || !exactRes.Complete() {
				t.Fatalf("unbounded replay evicted: %+v", exactRes.Stats)
			}
			t.Logf("%s: %d samples, %d alive at once at most", c.name, exactRes.Stats.Tracked, peak)
			for _, size := range c.sizes {
				if size >= peak {
					t.Fatalf("reservoir %d does not bind (peak %d)", size, peak)
				}
				// runs[type][measure] is one value per seed.
				runs := map[string]*[6][]float64{}
				dropped, followed := 0, 0
				for seed := uint64(1); seed <= reservoirSeeds; seed++ {
					r, peak := lt.replay(t, Options{MaxObjects: size, Seed: seed})
					if peak > size {
						t.Fatalf("size %d seed %d: %d objects followed at once", size, seed, peak)
					}
					dropped += r.Stats.Evicted + r.Stats.NotFollowed
					followed += r.Stats.Tracked - r.Stats.Evicted
					for k, e := range estimates(r) {
						x, ok := exact[k]
						if !ok || x.followed < 100 {
							continue
						}
						if runs[k] == nil {
							runs[k] = &[6][]float64{}
						}
						for i, v := range []float64{e.samples, e.bytes, e.liveBytes, e.survived, e.gen2, e.diedGen2} {
							runs[k][i] = append(runs[k][i], v)
						}
						for i, pe := range [][2]float64{{e.survived, x.survived}, {e.gen2, x.gen2}, {e.diedGen2, x.diedGen2}} {
							// Binomial standard error over the decided
							// samples this run followed.
							p := pe[1] / 100
							se := 100 * math.Sqrt(max(p*(1-p), 0.01)/float64(max(e.decided, 1)))
							if d := math.Abs(pe[0] - pe[1]); d > 5*se+0.5 {
								t.Errorf("size %d seed %d %s: %s is %.1f %%, truth %.1f %% (±%.1f over %d decided)",
									size, seed, k, measures[3+i], pe[0], pe[1], se, e.decided)
							}
						}
					}
				}
				if dropped == 0 {
					t.Fatalf("size %d: the reservoir dropped nothing", size)
				}
				// Worst error over types: of a single run, of the mean.
				var worst, worstMean [6]float64
				for k, m := range runs {
					x := exact[k]
					truth := [6]float64{x.samples, x.bytes, x.liveBytes, x.survived, x.gen2, x.diedGen2}
					for i, vs := range m {
						mean, sd := meanSD(vs)
						if se := sd / math.Sqrt(float64(len(vs))); math.Abs(mean-truth[i]) > 4*se+1e-9*truth[i] {
							t.Errorf("size %d %s: %s biased: mean %.4g ± %.2g over %d seeds, truth %.4g",
								size, k, measures[i], mean, se, len(vs), truth[i])
						}
						for _, v := range vs {
							worst[i] = max(worst[i], errOf(i, v, truth[i]))
						}
						worstMean[i] = max(worstMean[i], errOf(i, mean, truth[i]))
					}
				}
				t.Logf("size %4d (%2.0f%% of the peak): %5.1f%% of samples followed; worst run: samples %4.1f%%, bytes %4.1f%%, live bytes %5.1f%%, "+
					"survived %4.1f pt, gen2 %4.1f pt, died in gen2 %4.1f pt; mean of %d: %.1f%%, %.1f%%, %.1f%%, %.1f pt, %.1f pt, %.1f pt",
					size, 100*float64(size)/float64(peak), 100*float64(followed)/float64(followed+dropped),
					100*worst[0], 100*worst[1], 100*worst[2], worst[3], worst[4], worst[5], reservoirSeeds,
					100*worstMean[0], 100*worstMean[1], 100*worstMean[2], worstMean[3], worstMean[4], worstMean[5])
			}
		})
	}
}

var measures = [6]string{"samples", "bytes allocated", "live bytes", "survived one GC", "reached gen2", "died in gen2"}

// errOf is the error of measure i: relative for the first three, in
// percentage points for the others.
func errOf(i int, v, truth float64) float64 {
	if i >= 3 {
		return math.Abs(v - truth)
	}
	return relErr(v, truth)
}

func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	for _, x := range v {
		sd += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sd / float64(len(v)-1))
}

func relErr(est, truth float64) float64 {
	if truth == 0 {
		return math.Abs(est)
	}
	return math.Abs(est-truth) / truth
}
