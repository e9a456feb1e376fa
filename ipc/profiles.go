package ipc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/clrspy/clrspy/nettrace"
)

// Provider names and keywords the profiles use.
const (
	KeywordGC                            uint64 = 0x1
	KeywordLoader                        uint64 = 0x8
	KeywordJit                           uint64 = 0x10
	KeywordNGen                          uint64 = 0x20
	KeywordAppDomainResourceManagement   uint64 = 0x800
	KeywordContention                    uint64 = 0x4000
	KeywordException                     uint64 = 0x8000
	KeywordThreading                     uint64 = 0x10000
	KeywordType                          uint64 = 0x80000
	KeywordGCSampledObjectAllocationHigh uint64 = 0x200000
	KeywordGCSurvivalAndMovement         uint64 = 0x400000
	KeywordGCHeapDump                    uint64 = 0x100000
	KeywordGCHeapCollect                 uint64 = 0x800000
	KeywordGCHeapAndTypeNames            uint64 = 0x1000000
	KeywordWaitHandle                    uint64 = 0x40000000000
	KeywordAllocationSampling            uint64 = 0x80000000000

	// SampleProfilerKeywords enables the sample profiler's events.
	SampleProfilerKeywords uint64 = 0xF00000000000

	// KeywordSymbols names code: method and module load events, so stacks
	// of a live session resolve without waiting for the rundown.
	KeywordSymbols = KeywordLoader | KeywordJit | KeywordNGen
)

// SampleProfiler is the runtime's sample profiler (a managed stack of
// every thread each millisecond): a provider without keywords of its own
// to derive, written here once.
var SampleProfiler = Provider{Name: nettrace.ProviderSampleProfiler, Keywords: SampleProfilerKeywords, Level: LevelInformational}

// Levels.
const (
	LevelLogAlways     uint8 = 0
	LevelInformational uint8 = 4
	LevelVerbose       uint8 = 5
)

// profile is a named provider set, derived by a higher package when asked
// for.
type profile struct {
	doc    string
	derive func() []Provider
}

// profiles are clrspy's named provider sets (see ProfileNames), every one
// registered by cmd/clrspy (RegisterProfile), which derives them from the
// events the analyses read: ipc knows no analysis.
var profiles = map[string]profile{}

// RegisterProfile adds the named profile name, whose providers derive
// returns when it is asked for (a package above ipc derives them from the
// events its analyses read). Call it from an init function.
func RegisterProfile(name, doc string, derive func() []Provider) {
	profiles[name] = profile{doc: doc, derive: derive}
}

// ProfileNames lists the named profiles, sorted.
func ProfileNames() []string {
	var n []string
	for k := range profiles {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// ProfileDoc is a one-line description of a profile.
func ProfileDoc(name string) string { return profiles[name].doc }

// Profile returns the providers of a named profile.
func Profile(name string) ([]Provider, error) {
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (profiles: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	return p.derive(), nil
}

// Resolve merges the named profiles (none, and no extra providers: gc)
// and the extra providers in dotnet-trace form (Provider[:keywords[:level[:args]]],...).
func Resolve(names []string, extra string) ([]Provider, error) {
	var lists [][]Provider
	if len(names) == 0 && extra == "" {
		names = []string{"gc"}
	}
	for _, n := range names {
		p, err := Profile(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		lists = append(lists, p)
	}
	if extra != "" {
		p, err := ParseProviders(extra)
		if err != nil {
			return nil, err
		}
		lists = append(lists, p)
	}
	return Merge(lists...), nil
}

// ProfileHelp lists the profiles one a line, each with its description:
// the default (gc) first and all last, so the list reads from what to
// start with to everything.
func ProfileHelp() string {
	names := ProfileNames()
	rank := func(n string) int {
		switch n {
		case "gc":
			return 0
		case "all":
			return 2
		}
		return 1
	}
	sort.SliceStable(names, func(i, j int) bool { return rank(names[i]) < rank(names[j]) })
	var docs []string
	for _, n := range names {
		docs = append(docs, fmt.Sprintf("  %-11s %s", n, ProfileDoc(n)))
	}
	return strings.Join(docs, "\n")
}

// Merge combines provider lists: one entry per provider name, with the
// union of the keywords, the highest level and the last non-empty
// arguments. Order follows first appearance.
func Merge(lists ...[]Provider) []Provider {
	var out []Provider
	idx := map[string]int{}
	for _, l := range lists {
		for _, p := range l {
			i, ok := idx[p.Name]
			if !ok {
				idx[p.Name] = len(out)
				out = append(out, p)
				continue
			}
			q := &out[i]
			q.Keywords |= p.Keywords
			if p.Level > q.Level {
				q.Level = p.Level
			}
			if p.Args != "" {
				q.Args = p.Args
			}
		}
	}
	return out
}

var levelNames = map[string]uint8{
	"logalways": 0, "critical": 1, "error": 2, "warning": 3, "informational": 4, "verbose": 5,
}

// ParseProviders parses dotnet-trace's --providers form: a comma-separated
// list of Provider[:keywords[:level[:args]]]. Keywords are hex (0x
// optional; empty or "*" means all), level a number 0–5 or a name
// (Informational, Verbose, ...; empty means Verbose), args
// "key=value;key=value" (the rest of the entry, colons included).
func ParseProviders(spec string) ([]Provider, error) {
	var out []Provider
	for _, item := range splitProviders(spec) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		parts := strings.SplitN(item, ":", 4)
		p := Provider{Name: strings.TrimSpace(parts[0]), Keywords: ^uint64(0), Level: LevelVerbose}
		if p.Name == "" {
			return nil, fmt.Errorf("provider %q: empty provider name", item)
		}
		if len(parts) > 1 {
			if kw := strings.TrimSpace(parts[1]); kw != "" && kw != "*" {
				v, err := strconv.ParseUint(strings.TrimPrefix(strings.TrimPrefix(kw, "0x"), "0X"), 16, 64)
				if err != nil {
					return nil, fmt.Errorf("provider %s: keywords %q are not a hex number", p.Name, kw)
				}
				p.Keywords = v
			}
		}
		if len(parts) > 2 {
			if lv := strings.TrimSpace(parts[2]); lv != "" {
				if n, err := strconv.ParseUint(lv, 10, 8); err == nil && n <= 5 {
					p.Level = uint8(n)
				} else if n, ok := levelNames[strings.ToLower(lv)]; ok {
					p.Level = n
				} else {
					return nil, fmt.Errorf("provider %s: level %q is not 0–5 or a level name", p.Name, lv)
				}
			}
		}
		if len(parts) > 3 {
			p.Args = parts[3]
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no provider in %q", spec)
	}
	return out, nil
}

// splitProviders splits on commas outside double quotes (arguments may
// quote values that contain commas).
func splitProviders(s string) []string {
	var out []string
	quoted := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case ',':
			if !quoted {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
