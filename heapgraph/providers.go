package heapgraph

import (
	"github.com/clrspy/clrspy/clrevents"
	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// WantsDump reports whether an event of m is one of the heap dump's own
// (the GC that makes it, the types, the nodes, edges and roots): Wants
// without the method and module events, which the session's rundown
// brings.
func WantsDump(m *nettrace.Metadata) bool {
	if m.Runtime != nettrace.Runtime || m.EventID == clrevents.IDMethodLoadVerbose || m.EventID == clrevents.IDModuleLoad {
		return false
	}
	return Wants(m)
}

// SessionProviders is a heap snapshot's session: the runtime keywords of
// the dump's events (derived from WantsDump), and two no event carries,
// written here: GCHeapCollect, which induces the blocking gen2 GC that
// walks the heap, and GCHeapAndTypeNames, which makes BulkType carry the
// types' names. The level is verbose, dotnet-gcdump's.
func SessionProviders() []ipc.Provider {
	ps := clrevents.ProvidersFor(WantsDump)
	ps[0].Keywords |= ipc.KeywordGCHeapCollect | ipc.KeywordGCHeapAndTypeNames
	ps[0].Level = ipc.LevelVerbose
	return ps
}
