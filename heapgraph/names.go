package heapgraph

import "strings"

// unnamedPrefix starts the name the builder gives a type no BulkType
// event (nor KnownTypes) named: "Type(0x7f...)".
const unnamedPrefix = "Type(0x"

// UnnamedTypes counts the types no event named and their objects. The
// runtime names each type once while any session has its Type keyword
// on (ipc.Client.ResetTypeLog): types another session saw first come
// unnamed, and a report says so.
func (g *Graph) UnnamedTypes() (types, objects uint64) {
	unnamed := make([]bool, len(g.TypeNames))
	for i, n := range g.TypeNames {
		if strings.HasPrefix(n, unnamedPrefix) {
			unnamed[i] = true
			types++
		}
	}
	if types == 0 {
		return 0, 0
	}
	for _, t := range g.Type {
		if unnamed[t] {
			objects++
		}
	}
	return types, objects
}
