package report

import (
	"fmt"

	"github.com/google/pprof/profile"
)

// pprofLocs interns the functions and locations of a pprof profile built
// from named stacks (locks, exceptions, thread-pool waits): one function
// per module and name, one location per address, module and name.
type pprofLocs struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	locs  map[string]*profile.Location
}

func newPprofLocs(p *profile.Profile) *pprofLocs {
	return &pprofLocs{p: p, funcs: map[string]*profile.Function{}, locs: map[string]*profile.Location{}}
}

// location is the location of a frame; ip 0 when the frame has no
// address of its own (the symbolizer folded frames).
func (l *pprofLocs) location(ip uint64, name, mod string) *profile.Location {
	key := fmt.Sprintf("%x %s %s", ip, mod, name)
	if loc, ok := l.locs[key]; ok {
		return loc
	}
	fk := mod + "!" + name
	fn := l.funcs[fk]
	if fn == nil {
		fn = &profile.Function{ID: uint64(len(l.p.Function) + 1), Name: name, SystemName: name, Filename: mod}
		l.funcs[fk] = fn
		l.p.Function = append(l.p.Function, fn)
	}
	loc := &profile.Location{ID: uint64(len(l.p.Location) + 1), Address: ip, Line: []profile.Line{{Function: fn}}}
	l.locs[key] = loc
	l.p.Location = append(l.p.Location, loc)
	return loc
}

// stack is a stack's locations, leaf first, one per frame but those skip
// leaves out (skip sees the frame and how many are already in); none is
// the one frame noStack. Addresses go with frames only when they
// correspond one to one (the symbolizer may fold native runs into one
// frame).
func (l *pprofLocs) stack(ips []uint64, frames, modules []string, noStack string, skip func(kept int, frame string) bool) []*profile.Location {
	withIPs := len(ips) == len(frames)
	var sl []*profile.Location
	for i, f := range frames {
		if skip != nil && skip(len(sl), f) {
			continue
		}
		var ip uint64
		if withIPs {
			ip = ips[i]
		}
		mod := ""
		if i < len(modules) {
			mod = modules[i]
		}
		sl = append(sl, l.location(ip, f, mod))
	}
	if len(sl) == 0 {
		sl = append(sl, l.location(0, noStack, ""))
	}
	return sl
}
