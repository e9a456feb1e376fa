package report

import "github.com/clrspy/clrspy/stacks"

// methodFrames gives each of p's frames the index of its method: frames
// of one name, module and kind are one method whatever their code version
// (a profile keeps a frame per code body: tier-0, tier-1, a rejit), which
// the flame, folded and speedscope outputs cannot tell apart since they
// show names. dense[i] is frame i's method, 0..len(first)-1 in order of
// first appearance; first[m] is the first frame of method m.
func methodFrames(p *stacks.Profile) (dense, first []int32) {
	type key struct {
		name, module string
		kind         stacks.FrameKind
	}
	seen := make(map[key]int32, len(p.Frames))
	dense = make([]int32, len(p.Frames))
	for i := range p.Frames {
		f := &p.Frames[i]
		k := key{f.Name, f.Module, f.Kind}
		m, ok := seen[k]
		if !ok {
			m = int32(len(first))
			seen[k] = m
			first = append(first, int32(i))
		}
		dense[i] = m
	}
	return dense, first
}
