package stacks

import (
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/clrspy/clrspy/analysis"
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// method is one body of compiled code and the time it was valid.
type method struct {
	start, end   uint64
	load, unload int64 // ns since session start; MinInt64/MaxInt64 unknown
	id           uint64
	module       uint64
	name         string // Namespace.Type.Method(signature); "" if unnamed
	tier         clrevents.OptimizationTier
}

type methodKey struct {
	start uint64
	size  uint32
	id    uint64
}

type module struct {
	path string
	name string // file name of the IL path, e.g. System.Private.CoreLib.dll
}

// symtab is an interval map from code addresses to methods. Entries are
// kept whole (not merged) so that a range reused after an unload resolves
// to the method that owned it at the sample's time.
type symtab struct {
	methods  []method
	index    map[methodKey]int
	modules  map[uint64]module
	frozen   bool
	overlaps bool
	maxSize  uint64
	unloads  uint32 // bumped on every unload: stacks seen before and after may differ
}

func newSymtab() *symtab {
	return &symtab{index: make(map[methodKey]int), modules: make(map[uint64]module)}
}

// methodName is "Namespace.Type.Method(signature)": the runtime's
// signature text is "<return> (<args>)", and only the argument list
// identifies an overload.
func methodName(m *clrevents.Method) string {
	if m.Name == "" && m.Namespace == "" {
		return ""
	}
	var b strings.Builder
	if m.Namespace != "" {
		b.WriteString(m.Namespace)
		b.WriteByte('.')
	}
	b.WriteString(m.Name)
	if p := strings.IndexByte(m.Signature, '('); p >= 0 {
		b.WriteString(m.Signature[p:])
	}
	return b.String()
}

// add records a method body valid from load on.
func (s *symtab) add(m *clrevents.Method, load int64) {
	if m.Size == 0 {
		return
	}
	k := methodKey{m.StartAddress, m.Size, m.MethodID}
	name := methodName(m)
	if i, ok := s.index[k]; ok {
		e := &s.methods[i]
		if load < e.load {
			e.load = load
		}
		if e.name == "" {
			e.name = name
		}
		if e.tier == 0 {
			e.tier = m.Tier()
		}
		return
	}
	s.index[k] = len(s.methods)
	s.methods = append(s.methods, method{
		start: m.StartAddress, end: m.End(), load: load, unload: math.MaxInt64,
		id: m.MethodID, module: m.ModuleID, name: name, tier: m.Tier(),
	})
	s.frozen = false
}

// remove marks a method body unloaded at ts (collectible code).
func (s *symtab) remove(m *clrevents.Method, ts int64) {
	k := methodKey{m.StartAddress, m.Size, m.MethodID}
	i, ok := s.index[k]
	if !ok {
		s.add(m, math.MinInt64)
		i, ok = s.index[k]
		if !ok {
			return
		}
	}
	s.methods[i].unload = ts
	s.unloads++
}

func (s *symtab) addModule(m *clrevents.Module) {
	p := m.ILPath
	if p == "" {
		p = m.NativePath
	}
	// Windows paths in traces from Windows machines: take the base name
	// with either separator.
	base := p
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	if base == "" {
		base = path.Base(p)
	}
	s.modules[m.ModuleID] = module{path: p, name: base}
}

// SymbolsWant reports whether the symbol table uses events of m (method
// and module events of the runtime and rundown providers): what a file
// source may keep for it (source.Spec.Keep).
func SymbolsWant(m *nettrace.Metadata) bool {
	switch m.Runtime {
	case nettrace.Runtime:
		switch m.EventID {
		case clrevents.IDMethodLoadVerbose, clrevents.IDMethodUnloadVerbose, clrevents.IDMethodLoad,
			clrevents.IDMethodUnload, clrevents.IDModuleLoad, clrevents.IDDomainModuleLoad:
			return true
		}
	case nettrace.Rundown:
		switch m.EventID {
		case clrevents.IDRundownMethodDCStartVerbose, clrevents.IDRundownMethodDCEndVerbose, clrevents.IDRundownModuleDCStart,
			clrevents.IDRundownModuleDCEnd, clrevents.IDRundownDomainModuleDCEnd, clrevents.IDRundownDomainModuleDCStart:
			return true
		}
	}
	return false
}

// event adds a method or module event of the runtime or rundown provider
// to the table (MethodLoad/Unload[Verbose] while recording, rundown
// DCStart/DCEnd for what existed before); other events are ignored.
func (s *symtab) event(ev *nettrace.Event, hdr *nettrace.Header) (bool, error) {
	m := ev.Meta
	ptr := hdr.PointerSize
	switch {
	case m.Runtime == nettrace.Runtime && (m.EventID == clrevents.IDMethodLoadVerbose || m.EventID == clrevents.IDMethodUnloadVerbose ||
		m.EventID == clrevents.IDMethodLoad || m.EventID == clrevents.IDMethodUnload):
		var mt clrevents.Method
		var err error
		if m.EventID == clrevents.IDMethodLoadVerbose || m.EventID == clrevents.IDMethodUnloadVerbose {
			mt, err = clrevents.DecodeMethodVerbose(ev.Payload, m.Version, ptr)
		} else {
			mt, err = clrevents.DecodeMethod(ev.Payload, m.Version, ptr)
		}
		if err != nil {
			return true, err
		}
		ts := hdr.Nanos(ev.Timestamp)
		if m.EventID == clrevents.IDMethodLoadVerbose || m.EventID == clrevents.IDMethodLoad {
			s.add(&mt, ts)
		} else {
			s.remove(&mt, ts)
		}
	case m.Runtime == nettrace.Rundown && (m.EventID == clrevents.IDRundownMethodDCStartVerbose || m.EventID == clrevents.IDRundownMethodDCEndVerbose):
		mt, err := clrevents.DecodeMethodVerbose(ev.Payload, m.Version, ptr)
		if err != nil {
			return true, err
		}
		// Rundown lists what exists: it existed before the session.
		s.add(&mt, math.MinInt64)
	case (m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDModuleLoad) ||
		(m.Runtime == nettrace.Rundown && (m.EventID == clrevents.IDRundownModuleDCStart || m.EventID == clrevents.IDRundownModuleDCEnd)):
		mod, err := clrevents.DecodeModule(ev.Payload, m.Version, ptr)
		if err != nil {
			return true, err
		}
		s.addModule(&mod)
	case (m.Runtime == nettrace.Runtime && m.EventID == clrevents.IDDomainModuleLoad) ||
		(m.Runtime == nettrace.Rundown && (m.EventID == clrevents.IDRundownDomainModuleDCEnd || m.EventID == clrevents.IDRundownDomainModuleDCStart)):
		mod, err := clrevents.DecodeDomainModule(ev.Payload, m.Version, ptr)
		if err != nil {
			return true, err
		}
		s.addModule(&mod)
	default:
		return false, nil
	}
	return true, nil
}

// Symbols is the profiler's symbol table for analyses that name stacks of
// their own (allocation sites): feed it a stream's events, then name
// addresses. The zero of *Symbols (nil) names every address in hex.
type Symbols struct {
	hdr    *nettrace.Header
	tab    *symtab
	maps   []Mapping
	images func(path string, off uint64) string
	stats  analysis.Stats
}

// NewSymbols returns an empty table for a stream with header hdr.
func NewSymbols(hdr *nettrace.Header) *Symbols {
	return &Symbols{hdr: hdr, tab: newSymtab()}
}

// Event takes method and module events; others are ignored. Payloads that
// do not decode are counted (Stats), not fatal.
func (s *Symbols) Event(ev *nettrace.Event) {
	used, err := s.tab.event(ev, s.hdr)
	if used {
		s.stats.Used()
	}
	s.stats.Failed(err)
}

// Stats implements analysis.Analyzer.
func (s *Symbols) Stats() analysis.Stats { return s.stats }

// Frames names a stack (leaf first) as it stands at the end of the stream:
// "Namespace.Type.Method(signature)", or the address in hex when no method
// covers it. Callers' return addresses are moved back one byte so a call at
// a method's last instruction stays inside it.
func (s *Symbols) Frames(stack []uint64) []string {
	out := make([]string, len(stack))
	if s != nil && !s.tab.frozen {
		s.tab.freeze()
	}
	for i, ip := range stack {
		if i > 0 && ip > 0 {
			ip--
		}
		out[i] = fmt.Sprintf("0x%x", ip)
		if s != nil {
			if m := s.tab.lookup(ip, math.MaxInt64); m != nil && m.name != "" {
				out[i] = m.name
			}
		}
	}
	return out
}

// Method is a body of code Lookup found.
type Method struct {
	Name   string // "Namespace.Type.Method(signature)"; "" if unnamed
	Module string // file name of the IL image, "" if unknown
	Start  uint64 // code start
	End    uint64
	Tier   clrevents.OptimizationTier
}

// Lookup finds the method whose code contained addr at time nanos
// (nanoseconds since the session start, as nettrace.Header.Nanos counts):
// of code ranges reused after an unload, the body valid then. Callers
// adjust return addresses themselves. It must not run concurrently with
// Event.
func (s *Symbols) Lookup(addr uint64, nanos int64) (Method, bool) {
	if s == nil {
		return Method{}, false
	}
	if !s.tab.frozen {
		s.tab.freeze()
	}
	m := s.tab.lookup(addr, nanos)
	if m == nil {
		return Method{}, false
	}
	name := m.name
	if name == "" {
		name = fmt.Sprintf("method@%#x", m.start)
	}
	return Method{Name: name, Module: s.tab.modules[m.module].name, Start: m.start, End: m.end, Tier: m.tier}, true
}

// Len is the number of method bodies in the table.
func (s *Symbols) Len() int {
	if s == nil {
		return 0
	}
	return len(s.tab.methods)
}

// freeze sorts the table and fills names of non-verbose records from
// verbose records of the same MethodID.
func (s *symtab) freeze() {
	if s.frozen {
		return
	}
	names := make(map[uint64]string)
	for i := range s.methods {
		if s.methods[i].name != "" {
			names[s.methods[i].id] = s.methods[i].name
		}
	}
	for i := range s.methods {
		if s.methods[i].name == "" {
			s.methods[i].name = names[s.methods[i].id]
		}
	}
	sort.Slice(s.methods, func(i, j int) bool {
		a, b := &s.methods[i], &s.methods[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return a.load < b.load
	})
	for k := range s.index {
		delete(s.index, k)
	}
	s.overlaps = false
	s.maxSize = 0
	var maxEnd uint64
	for i := range s.methods {
		m := &s.methods[i]
		s.index[methodKey{m.start, uint32(m.end - m.start), m.id}] = i
		if m.start < maxEnd {
			s.overlaps = true
		}
		maxEnd = max(maxEnd, m.end)
		s.maxSize = max(s.maxSize, m.end-m.start)
	}
	s.frozen = true
}

// lookup finds the method containing addr at time ts (ns), or nil.
func (s *symtab) lookup(addr uint64, ts int64) *method {
	ms := s.methods
	i := sort.Search(len(ms), func(i int) bool { return ms[i].start > addr }) - 1
	if i < 0 {
		return nil
	}
	if !s.overlaps {
		if addr < ms[i].end {
			return &ms[i]
		}
		return nil
	}
	// Overlapping ranges (code memory reused after an unload): prefer the
	// body valid at ts, then the latest loaded before ts, then any.
	var best *method
	score := -1
	for ; i >= 0 && ms[i].start+s.maxSize > addr; i-- {
		m := &ms[i]
		if addr >= m.end {
			continue
		}
		sc := 0
		switch {
		case m.load <= ts && ts < m.unload:
			sc = 2
		case m.load <= ts:
			sc = 1
		}
		if sc > score || (sc == score && best != nil && m.load > best.load) {
			best, score = m, sc
		}
	}
	return best
}

// Stack names a stack (leaf first) with the profiler's rules, as it stood
// at ts (ns since the session start): callers' return addresses move back
// one byte (a call that ends a method stays inside it); addresses no method
// covers are named by their file mapping when one is known (module+0xOFF
// for managed images, or the ReadyToRun method there that SetImageNamer's
// function names, one [native code] frame for a run of native-library
// frames), else [unknown]; a stack at the walk limit ends in [truncated].
func (s *Symbols) Stack(ips []uint64, ts int64) (frames []Frame, truncated bool) {
	return s.AppendStack(make([]Frame, 0, len(ips)+1), ips, ts)
}

// AppendStack is Stack appending the frames to dst: callers that name many
// stacks and keep no Frame reuse one slice (the page's profile and lock
// results named 13 MB of frames once each on a 1 GiB trace).
func (s *Symbols) AppendStack(dst []Frame, ips []uint64, ts int64) (frames []Frame, truncated bool) {
	t := s.tab
	t.freeze()
	out, first := dst, len(dst)
	for i, ip := range ips {
		addr := ip
		if i > 0 && addr > 0 {
			addr--
		}
		m := t.lookup(addr, ts)
		if m == nil {
			if mp := s.mapping(addr); mp != nil {
				if isNative(mp) {
					if len(out) == first || out[len(out)-1].Kind != KindNative {
						out = append(out, Frame{Name: NativeFrame, Kind: KindNative})
					}
					continue
				}
				base := mp.Path[strings.LastIndexByte(mp.Path, '/')+1:]
				off := addr - mp.Start + mp.Offset
				if s.images != nil {
					if name := s.images(mp.Path, off); name != "" {
						out = append(out, Frame{Name: name, Module: base, Kind: KindManaged})
						continue
					}
				}
				out = append(out, Frame{Name: fmt.Sprintf("%s+%#x", base, off), Module: base, Kind: KindUnknown})
				continue
			}
			out = append(out, Frame{Name: UnknownFrame, Kind: KindUnknown})
			continue
		}
		name := m.name
		if name == "" {
			name = fmt.Sprintf("method@%#x", m.start)
		}
		out = append(out, Frame{Name: name, Module: t.modules[m.module].name, Kind: KindManaged, Address: m.start, Tier: m.tier})
	}
	truncated = len(ips) >= MaxStackDepth
	if truncated {
		out = append(out, Frame{Name: TruncatedFrame, Kind: KindTruncated})
	}
	return out, truncated
}

// SymbolsIn is the one symbol table of a Set: every analysis of the Set
// that names stacks shares it, and it is fed before them.
func SymbolsIn(s *analysis.Set) *analysis.Ref[*Symbols] {
	return analysis.Shared(s, analysis.Spec{Name: "symbols", Keep: SymbolsWant}, NewSymbols)
}
