package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/clrspy/clrspy/internal/tracetest"
	"github.com/clrspy/clrspy/nettrace"
	"github.com/clrspy/clrspy/stacks"
)

type evFile struct {
	Schema string `json:"$schema"`
	Shared struct {
		Frames []ssFrame `json:"frames"`
	} `json:"shared"`
	Profiles []struct {
		Type       string `json:"type"`
		Name       string `json:"name"`
		Unit       string `json:"unit"`
		StartValue int64  `json:"startValue"`
		EndValue   int64  `json:"endValue"`
		Events     []struct {
			Type  string `json:"type"`
			Frame int32  `json:"frame"`
			At    int64  `json:"at"`
		} `json:"events"`
	} `json:"profiles"`
}

// TestEventedSpeedscope writes the time-ordered speedscope file of a real
// trace and checks it against the aggregated profile of the same samples:
// properly nested events in time order, and per thread and frame exactly
// the thread time the profile gives that frame (a sample at t with weight d
// holds its stack over [t-d, t]).
func TestEventedSpeedscope(t *testing.T) {
	// The workload's composite mode: 8 sampled threads, 1,283 samples.
	r := tracetest.Open(t, "composite.nettrace", nettrace.NewReader)
	ss, err := NewEventedSpeedscope(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := stacks.New(r.Header(), stacks.Options{OnSample: ss.Sample})
	if err := tracetest.ReadAll(t, r, b.Event); err != nil {
		t.Fatal(err)
	}
	p := b.Result()
	var buf bytes.Buffer
	if err := ss.Write(&buf, b, p, "composite.nettrace"); err != nil {
		t.Fatal(err)
	}
	if err := ss.Close(); err != nil {
		t.Fatal(err)
	}
	var doc evFile
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "https://www.speedscope.app/file-format-schema.json" || len(doc.Profiles) != len(p.Threads) || len(p.Threads) != 8 {
		t.Fatalf("schema %q, %d profiles for %d threads", doc.Schema, len(doc.Profiles), len(p.Threads))
	}
	// What the aggregated profile says: thread time per thread and method
	// (the document's frame: a method's code versions are one frame),
	// counted once per sample however often it recurs.
	dense, _ := methodFrames(p)
	want := map[string]map[int32]int64{}
	for _, s := range p.Samples {
		th := p.Threads[s.Thread].Label()
		if want[th] == nil {
			want[th] = map[int32]int64{}
		}
		seen := map[int32]bool{}
		for _, fr := range s.Stack {
			fr = dense[fr]
			if !seen[fr] {
				want[th][fr] += s.Nanos
				seen[fr] = true
			}
		}
	}
	prevSamples := int64(1 << 62)
	for _, pr := range doc.Profiles {
		if pr.Type != "evented" || pr.Unit != "nanoseconds" || len(pr.Events) == 0 {
			t.Fatalf("profile %q: type %s unit %s, %d events", pr.Name, pr.Type, pr.Unit, len(pr.Events))
		}
		got := map[int32]int64{}
		var open []int32
		openAt := map[int32][]int64{}
		last := pr.StartValue
		for _, e := range pr.Events {
			if e.At < last {
				t.Fatalf("%s: event at %d after %d", pr.Name, e.At, last)
			}
			last = e.At
			switch e.Type {
			case "O":
				open = append(open, e.Frame)
				openAt[e.Frame] = append(openAt[e.Frame], e.At)
			case "C":
				if len(open) == 0 || open[len(open)-1] != e.Frame {
					t.Fatalf("%s: closes frame %d, open %v", pr.Name, e.Frame, open)
				}
				open = open[:len(open)-1]
				ats := openAt[e.Frame]
				if len(ats) == 1 { // the outermost occurrence
					got[e.Frame] += e.At - ats[0]
				}
				openAt[e.Frame] = ats[:len(ats)-1]
			default:
				t.Fatalf("event type %q", e.Type)
			}
		}
		if len(open) != 0 || last != pr.EndValue {
			t.Errorf("%s: %d frames left open, last event %d, endValue %d", pr.Name, len(open), last, pr.EndValue)
		}
		w := want[pr.Name]
		if len(got) != len(w) {
			t.Errorf("%s: %d frames in the events, %d in the profile", pr.Name, len(got), len(w))
		}
		for fr, ns := range w {
			if got[fr] != ns {
				t.Errorf("%s: %s held %d ns in the events, %d in the profile", pr.Name, doc.Shared.Frames[fr].Name, got[fr], ns)
			}
		}
		var n int64
		for _, s := range p.Samples {
			if p.Threads[s.Thread].Label() == pr.Name {
				n += s.Count
			}
		}
		if n > prevSamples {
			t.Errorf("%s: %d samples after a thread with %d: not busiest first", pr.Name, n, prevSamples)
		}
		prevSamples = n
	}
	tracetest.Golden(t, "composite.evented.speedscope.json", buf.Bytes())
}
