package report

import (
	"encoding/json"
	"io"
	"sort"
	"strings"

	"github.com/clrspy/clrspy/stacks"
)

// speedscope's file format (https://www.speedscope.app/file-format-schema.json).
type ssFile struct {
	Schema             string      `json:"$schema"`
	Shared             ssShared    `json:"shared"`
	Profiles           []ssProfile `json:"profiles"`
	Name               string      `json:"name"`
	ActiveProfileIndex int         `json:"activeProfileIndex"`
	Exporter           string      `json:"exporter"`
}

type ssShared struct {
	Frames []ssFrame `json:"frames"`
}

type ssFrame struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

type ssProfile struct {
	Type       string    `json:"type"`
	Name       string    `json:"name"`
	Unit       string    `json:"unit"`
	StartValue int64     `json:"startValue"`
	EndValue   int64     `json:"endValue"`
	Samples    [][]int32 `json:"samples"`
	Weights    []int64   `json:"weights"`
}

// WriteSpeedscope writes p as a speedscope document: one "sampled"
// profile per thread, weighted by thread time in nanoseconds, busiest
// thread first. Samples are aggregates, so speedscope's time-order view
// shows each distinct stack once; left-heavy and sandwich views are exact.
func WriteSpeedscope(w io.Writer, p *stacks.Profile, name string) error {
	doc := ssFile{
		Schema:   "https://www.speedscope.app/file-format-schema.json",
		Name:     partialName(name, p.Notes),
		Exporter: "clrspy",
	}
	dense, frames := ssFrames(p)
	doc.Shared.Frames = frames
	byThread := make([]*ssProfile, len(p.Threads))
	for i := range p.Samples {
		s := &p.Samples[i]
		sp := byThread[s.Thread]
		if sp == nil {
			sp = &ssProfile{Type: "sampled", Name: p.Threads[s.Thread].Label(), Unit: "nanoseconds", Samples: [][]int32{}, Weights: []int64{}}
			byThread[s.Thread] = sp
		}
		root := make([]int32, len(s.Stack))
		for j, f := range s.Stack {
			root[len(s.Stack)-1-j] = dense[f]
		}
		sp.Samples = append(sp.Samples, root)
		sp.Weights = append(sp.Weights, s.Nanos)
		sp.EndValue += s.Nanos
	}
	for _, sp := range byThread {
		if sp != nil {
			doc.Profiles = append(doc.Profiles, *sp)
		}
	}
	sort.SliceStable(doc.Profiles, func(i, j int) bool { return doc.Profiles[i].EndValue > doc.Profiles[j].EndValue })
	if doc.Profiles == nil {
		doc.Profiles = []ssProfile{}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(&doc)
}

// ssFrames is the document's frame list: one frame per method (name,
// module and kind; methodFrames), not per code version. speedscope tells
// frames apart by their index, so a method's tier-0 and tier-1 bodies
// would be two rows of one name in its sandwich and left-heavy views,
// each with part of the method's time. dense maps p's frames to the
// list's indices.
func ssFrames(p *stacks.Profile) (dense []int32, frames []ssFrame) {
	dense, first := methodFrames(p)
	frames = make([]ssFrame, len(first))
	for m, i := range first {
		frames[m] = ssFrame{Name: p.Frames[i].Name, File: p.Frames[i].Module}
	}
	return dense, frames
}

// partialName appends the profile's notes (what makes it partial first) to
// its name, the one text every viewer shows.
func partialName(name string, notes []string) string {
	if len(notes) == 0 {
		return name
	}
	return name + " (" + strings.Join(notes, "; ") + ")"
}
