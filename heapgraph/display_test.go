package heapgraph

import "testing"

// TestDisplayName: runtime type names as .NET users read them.
func TestDisplayName(t *testing.T) {
	for in, want := range map[string]string{
		"System.Collections.Generic.Dictionary`2[System.Int64,LeakSession]":                                        "Dictionary<Int64,LeakSession>",
		"System.Collections.Generic.List`1[System.Collections.Generic.KeyValuePair`2[System.String,System.Int32]]": "List<KeyValuePair<String,Int32>>",
		"System.Collections.Generic.List`1[System.String][]":                                                       "List<String>[]",
		"System.String":   "System.String",
		"System.Byte[]":   "System.Byte[]",
		"System.Int32[,]": "System.Int32[,]",
		"MemberInfoCache`1[System.Reflection.RuntimeMethodInfo]":                             "MemberInfoCache<RuntimeMethodInfo>",
		"System.Collections.Generic.Dictionary`2+KeyCollection[System.String,System.Object]": "Dictionary+KeyCollection<String,Object>",
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDisplayNamesContainer: a nested generic type the runtime named
// without its container gets it back from the snapshot's own types.
func TestDisplayNamesContainer(t *testing.T) {
	g := &Graph{TypeNames: []string{
		"System.Collections.Generic.Dictionary`2[System.Int64,LeakSession]",
		"Entry[System.Int64,LeakSession][]",
		"System.Collections.Generic.KeyValuePair`2[System.Int64,LeakSession]",
		"System.Collections.Generic.HashSet`1[System.String]",
		"Entry[System.String][]",
		"Entry[System.Guid][]", // no container in the snapshot
		"LeakSession",
	}}
	want := []string{"Dictionary<Int64,LeakSession>", "Dictionary<Int64,LeakSession>+Entry[]", "KeyValuePair<Int64,LeakSession>",
		"HashSet<String>", "HashSet<String>+Entry[]", "Entry<Guid>[]", "LeakSession"}
	got := g.DisplayNames()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%q: %q, want %q", g.TypeNames[i], got[i], want[i])
		}
	}
	// --why takes the readable name, the exact one, or a suffix of either.
	g.N, g.Type = 7, []uint32{0, 1, 2, 3, 4, 5, 6}
	for _, spec := range []string{"Dictionary<Int64,LeakSession>+Entry[]", "Entry[System.Int64,LeakSession][]"} {
		m, err := g.Matcher(spec)
		if err != nil || !m(1) || m(0) || m(4) {
			t.Errorf("--why %s: err %v, matches entries %v, dictionary %v, other entries %v", spec, err, m != nil && m(1), m != nil && m(0), m != nil && m(4))
		}
	}
}
