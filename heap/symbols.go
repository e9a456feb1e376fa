package heap

import (
	"fmt"
	"slices"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// Symbols names allocation-stack addresses from the method events of the
// same stream (MethodLoadVerbose while recording, MethodDCStart/EndVerbose
// rundown). It is deliberately small: package stacks owns full
// symbolization (tiers over time, modules, native frames); this only lets
// allocation sites be named until heap can use it.
type Symbols struct {
	methods []method
	sorted  bool
}

type method struct {
	start, end uint64
	name       string
}

// Event takes method events; others are ignored.
func (s *Symbols) Event(ev *nettrace.Event, ptrSize int) {
	m := ev.Meta
	if m == nil {
		return
	}
	verbose := (m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDMethodLoadVerbose) ||
		(m.Runtime == nettrace.Rundown && (m.EventID == clrevents.IDRundownMethodDCStartVerbose || m.EventID == clrevents.IDRundownMethodDCEndVerbose))
	if !verbose {
		return
	}
	md, err := clrevents.DecodeMethodVerbose(ev.Payload, m.Version, ptrSize)
	if err != nil || md.Size == 0 {
		return
	}
	name := md.Name
	if md.Namespace != "" {
		name = md.Namespace + "." + md.Name
	}
	s.methods = append(s.methods, method{start: md.StartAddress, end: md.End(), name: name})
	s.sorted = false
}

// Name returns the method containing ip, or its address in hex.
func (s *Symbols) Name(ip uint64) string {
	if s != nil {
		if !s.sorted {
			slices.SortStableFunc(s.methods, func(a, b method) int { return cmpU64(a.start, b.start) })
			s.sorted = true
		}
		i, _ := slices.BinarySearchFunc(s.methods, ip+1, func(m method, a uint64) int { return cmpU64(m.start, a) })
		if i > 0 && ip < s.methods[i-1].end {
			return s.methods[i-1].name
		}
	}
	return fmt.Sprintf("0x%x", ip)
}

// Frames names a stack, leaf first. Callers' return addresses are moved
// back one byte so a call at a method's last instruction stays inside it.
func (s *Symbols) Frames(stack []uint64) []string {
	out := make([]string, len(stack))
	for i, ip := range stack {
		if i > 0 && ip > 0 {
			ip--
		}
		out[i] = s.Name(ip)
	}
	return out
}
