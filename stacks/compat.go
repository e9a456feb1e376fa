package stacks

import (
	"sort"
	"strings"

	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/nettrace"
)

// The dotnetdiag compatibility mode (CATALOG.md §7.3) reproduces
// pyroscope-io/dotnetdiag's folded output, quirks included, so that its
// published goldens can check this reader and profiler end to end.

// ddThread is dotnetdiag's per-thread state: the last Managed and External
// sample times, with the sign of lastExternal encoding which came last.
type ddThread struct {
	lastExternal int64 // >0 external last, <0 managed last, 0 nothing yet
	lastManaged  int64
}

func (b *Builder) ddSample(ev *nettrace.Event, typ clrevents.SampleType) {
	b.total++
	rel := ev.Timestamp - b.hdr.SyncTimeQPC
	if rel < 0 {
		b.dropped++
		return
	}
	if f := b.hdr.QPCFrequency; f > 0 {
		rel *= 1_000_000_000 / f
	}
	t := b.thread(ev.ThreadID)
	th := &b.threads[t.idx]
	s := &t.dd
	var credit int64
	credited := false
	managedCredit := func() {
		if s.lastManaged > 0 {
			credit, credited = rel-s.lastManaged, true
		}
	}
	externalCredit := func() {
		if s.lastExternal > 0 && !b.opts.ManagedOnly {
			credit, credited = rel-s.lastExternal, true
		}
	}
	switch typ {
	case clrevents.SampleManaged:
		b.managed++
		th.Samples++
		switch {
		case s.lastExternal == 0:
			managedCredit()
			s.lastExternal = -1
		case s.lastExternal < 0:
			managedCredit()
		default:
			externalCredit()
			s.lastExternal = -rel
		}
		s.lastManaged = rel
	case clrevents.SampleExternal:
		b.external++
		th.Samples++
		th.External++
		if s.lastExternal < 0 {
			managedCredit()
		} else {
			externalCredit()
		}
		s.lastExternal = rel
	default:
		b.errors++
		return
	}
	b.first = min(b.first, rel)
	b.last = max(b.last, rel)
	if credited {
		b.add(t, b.raw(ev.Stack, ev.StackID, ev.StackGen, rel), 0, 1, credit)
	}
}

// ddSymbols is dotnetdiag's symbol table: rundown MethodDCEndVerbose only,
// keyed by start address (a later record for the same start wins), and
// DomainModuleDCEnd for module names.
type ddSymbols struct {
	addrs   []uint64 // every record's start, duplicates kept
	byStart map[uint64]clrevents.Method
	modules map[uint64]string
	names   map[uint64]string
}

func newDDSymbols() *ddSymbols {
	return &ddSymbols{byStart: make(map[uint64]clrevents.Method), modules: make(map[uint64]string), names: make(map[uint64]string)}
}

func (d *ddSymbols) addMethod(m *clrevents.Method) {
	d.addrs = append(d.addrs, m.StartAddress)
	d.byStart[m.StartAddress] = *m
}

// addModule names a module by its IL path's base name without extension
// (as Go's filepath.Base and filepath.Ext do on Unix).
func (d *ddSymbols) addModule(m *clrevents.Module) {
	p := m.ILPath
	base := p
	if base == "" {
		base = "."
	} else {
		base = strings.TrimRight(base, "/")
		if base == "" {
			base = "/"
		} else if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
	}
	ext := ""
	for i := len(p) - 1; i >= 0 && p[i] != '/'; i-- {
		if p[i] == '.' {
			ext = p[i:]
			break
		}
	}
	d.modules[m.ModuleID] = strings.TrimSuffix(base, ext)
}

func (d *ddSymbols) freeze() {
	sort.Slice(d.addrs, func(i, j int) bool { return d.addrs[i] < d.addrs[j] })
}

// name formats module!Namespace.Method(sig); a signature without '(' is
// appended whole, as dotnetdiag does.
func (d *ddSymbols) name(start uint64) string {
	if s, ok := d.names[start]; ok {
		return s
	}
	m := d.byStart[start]
	sig := m.Signature
	if p := strings.IndexByte(sig, '('); p >= 0 {
		sig = sig[p:]
	}
	mod, ok := d.modules[m.ModuleID]
	if !ok {
		mod = "?"
	}
	s := mod + "!" + m.Namespace + "." + m.Name + sig
	d.names[start] = s
	return s
}

// lookup finds the method start for ip: the last start at or below ip,
// whose code must cover ip (no return-address adjustment).
func (d *ddSymbols) lookup(ip uint64) (uint64, bool) {
	i := sort.Search(len(d.addrs), func(i int) bool { return d.addrs[i] > ip })
	if i == 0 {
		return 0, false
	}
	m, ok := d.byStart[d.addrs[i-1]]
	if !ok || m.StartAddress+uint64(m.Size) <= ip {
		return 0, false
	}
	return m.StartAddress, true
}

func (d *ddSymbols) resolve(r *resolver, ips []uint64) []int32 {
	out := make([]int32, len(ips))
	for i, ip := range ips {
		start, ok := d.lookup(ip)
		if !ok {
			out[i] = r.frame(Frame{Name: "?!?", Kind: KindUnknown})
			continue
		}
		out[i] = r.frame(Frame{Name: d.name(start), Kind: KindManaged, Address: start})
	}
	return out
}
