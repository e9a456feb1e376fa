package heapgraph

import (
	"strings"
)

// Type names as .NET users read them. The runtime names a generic type
// `System.Collections.Generic.Dictionary`2[System.Int64,LeakSession]` and
// loses the containing type of a generic nested one
// (`Entry[System.Int64,LeakSession][]` for Dictionary's entries);
// dotnet-gcdump and PerfView show `Dictionary<Int64,LeakSession>` and
// `Dictionary<Int64,LeakSession>+Entry[]`. Text shows the readable form,
// JSON keeps the runtime's exact name beside it, and --why takes either.

// DisplayName is the readable form of one runtime type name: a generic
// type with its arity mark dropped and its arguments in angle brackets,
// namespaces dropped throughout (`Dictionary<Int64,LeakSession>`); a
// name that is not generic is returned as it is. A nested generic type
// whose container the runtime dropped keeps its own name only
// (`Entry<Int64,LeakSession>[]`): Graph.DisplayNames finds the container.
func DisplayName(exact string) string {
	base, args, suffix, ok := splitGeneric(exact)
	if !ok {
		return exact
	}
	return shortGeneric(base, args) + suffix
}

// splitGeneric cuts "Ns.Name`2[A,B][]" into "Ns.Name`2", ["A","B"] and
// "[]"; ok is false for a name without generic arguments.
func splitGeneric(s string) (base string, args []string, suffix string, ok bool) {
	i := strings.IndexByte(s, '[')
	if i <= 0 || i+1 >= len(s) || s[i+1] == ']' || s[i+1] == ',' {
		return "", nil, "", false // no brackets, or an array's
	}
	depth, start := 0, i+1
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				args = append(args, s[start:j])
				return s[:i], args, s[j+1:], true
			}
		case ',':
			if depth == 1 {
				args = append(args, s[start:j])
				start = j + 1
			}
		}
	}
	return "", nil, "", false
}

// shortGeneric writes base<args> with namespaces and arity marks dropped.
func shortGeneric(base string, args []string) string {
	var b strings.Builder
	b.WriteString(shortName(base))
	b.WriteByte('<')
	for i, a := range args {
		if i > 0 {
			b.WriteByte(',')
		}
		a = strings.TrimSpace(a)
		if strings.HasPrefix(a, "[") && strings.HasSuffix(a, "]") { // [Type, Assembly] form
			a = a[1 : len(a)-1]
			if k := strings.IndexByte(a, ','); k > 0 {
				a = a[:k]
			}
		}
		if ab, aa, as, ok := splitGeneric(a); ok {
			b.WriteString(shortGeneric(ab, aa) + as)
		} else {
			b.WriteString(shortName(a))
		}
	}
	b.WriteByte('>')
	return b.String()
}

// shortName drops the namespace and the arity marks of a (non-generic
// part of a) type name: "System.Collections.Generic.Dictionary`2+Entry"
// is "Dictionary+Entry".
func shortName(s string) string {
	suffix := ""
	if i := strings.IndexByte(s, '['); i > 0 { // an array's brackets
		s, suffix = s[:i], s[i:]
	}
	parts := strings.Split(s, "+")
	if i := strings.LastIndexByte(parts[0], '.'); i >= 0 {
		parts[0] = parts[0][i+1:]
	}
	for k, p := range parts {
		if i := strings.IndexByte(p, '`'); i >= 0 {
			parts[k] = p[:i]
		}
	}
	return strings.Join(parts, "+") + suffix
}

// nestedIn names the generic types of the base class library that nest a
// generic type of this name with their own arguments, the likeliest
// first: the containers a nested name without its container is matched
// against when the snapshot holds several generic types of the same
// arguments.
var nestedIn = map[string][]string{
	"Entry":         {"System.Collections.Generic.Dictionary`2", "System.Collections.Generic.HashSet`1", "System.Collections.Generic.SortedList`2"},
	"Node":          {"System.Collections.Concurrent.ConcurrentDictionary`2", "System.Collections.Generic.LinkedList`1", "System.Collections.Generic.SortedSet`1"},
	"VolatileNode":  {"System.Collections.Concurrent.ConcurrentDictionary`2"},
	"Tables":        {"System.Collections.Concurrent.ConcurrentDictionary`2"},
	"Enumerator":    {"System.Collections.Generic.List`1", "System.Collections.Generic.Dictionary`2"},
	"Segment":       {"System.Collections.Concurrent.ConcurrentQueue`1"},
	"KeyCollection": {"System.Collections.Generic.Dictionary`2"},
}

// DisplayNames is the readable name of every type (by type id): the
// DisplayName of each, and for a generic nested type the runtime named
// without its container, the container found among the snapshot's own
// types (the generic type of the same arguments; of several, the one the
// base class library nests such a type in), so that
// `Entry[System.Int64,LeakSession][]` reads
// `Dictionary<Int64,LeakSession>+Entry[]`. Two types that would read the
// same keep their exact names.
func (g *Graph) DisplayNames() []string {
	out := make([]string, len(g.TypeNames))
	// Generic types by their argument list: the candidate containers.
	byArgs := map[string][]string{}
	for _, n := range g.TypeNames {
		base, args, suffix, ok := splitGeneric(n)
		if !ok || suffix != "" || !strings.Contains(base, "`") || strings.Contains(base, "+") {
			continue
		}
		key := strings.Join(args, ",")
		if !contains(byArgs[key], base) {
			byArgs[key] = append(byArgs[key], base)
		}
	}
	for i, n := range g.TypeNames {
		base, args, suffix, ok := splitGeneric(n)
		if !ok {
			out[i] = n
			continue
		}
		if !strings.ContainsAny(base, "`.+") { // a nested generic type without its container
			if c := container(base, byArgs[strings.Join(args, ",")]); c != "" {
				out[i] = shortGeneric(c, args) + "+" + base + suffix
				continue
			}
		}
		out[i] = shortGeneric(base, args) + suffix
	}
	// Readable names must stay distinct: a clash keeps the exact ones.
	seen := map[string]int{}
	for _, d := range out {
		seen[d]++
	}
	for i, d := range out {
		if seen[d] > 1 {
			out[i] = g.TypeNames[i]
		}
	}
	return out
}

// container picks the container of nested type name among cands (generic
// types of the same arguments): for a name the base class library nests
// (nestedIn), the first of its containers present; else the only one.
func container(name string, cands []string) string {
	known, ok := nestedIn[name]
	if !ok && len(cands) == 1 {
		return cands[0]
	}
	for _, k := range known {
		if contains(cands, k) {
			return k
		}
	}
	return ""
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
