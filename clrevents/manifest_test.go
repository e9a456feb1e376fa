package clrevents

import (
	"testing"

	"github.com/clrspy/clrspy/ipc"
	"github.com/clrspy/clrspy/nettrace"
)

// Rows of the table checked against the runtime's manifest
// (src/coreclr/vm/ClrEtwAll.man, newest version of each event).
func TestManifestKnownRows(t *testing.T) {
	for _, tc := range []struct {
		p     nettrace.ProviderKind
		id    uint32
		name  string
		kw    uint64
		level uint8
	}{
		{nettrace.Runtime, IDGCStart, "GC/Start", 0x1, LevelInformational},
		{nettrace.Runtime, IDGCAllocationTick, "GC/AllocationTick", 0x1, LevelVerbose},
		// JitKeyword | NGenKeyword: jitted and ready-to-run methods.
		{nettrace.Runtime, IDMethodLoadVerbose, "Method/LoadVerbose", 0x30, LevelInformational},
		{nettrace.Runtime, IDModuleLoad, "Loader/ModuleLoad", 0x20000008, LevelInformational},
		{nettrace.Runtime, IDWaitHandleWaitStart, "WaitHandleWait/Start", 0x40000000000, LevelVerbose},
		{nettrace.Runtime, IDContentionStart, "Contention/Start", 0x4000, LevelInformational},
		{nettrace.Runtime, IDGCBulkNode, "GC/BulkNode", 0x100000, LevelInformational},
		// ExceptionKeyword | MonitoringKeyword, at win:Error.
		{nettrace.Runtime, IDExceptionThrown, "Exception/Start", 0x200008000, LevelError},
		{nettrace.Runtime, IDExceptionCatchStart, "ExceptionCatch/Start", 0x8000, LevelInformational},
		// AppDomainResourceManagementKeyword | ThreadingKeyword.
		{nettrace.Runtime, IDThreadCreated, "AppDomainResourceManagement/ThreadCreated", 0x10800, LevelInformational},
		{nettrace.Runtime, IDThreadPoolAdjustmentStats, "ThreadPoolWorkerThreadAdjustment/Stats", 0x10000, LevelVerbose},
		{nettrace.Runtime, IDAllocationSampled, "AllocationSampled/Info", 0x80000000000, LevelInformational},
		{nettrace.Runtime, IDGCDynamicEvent, "GC/DynamicEvent", 0x3F00003, LevelInformational},
		{nettrace.Runtime, 187, "Runtime/Start", 0, LevelInformational},
		{nettrace.Rundown, IDRundownMethodDCEndVerbose, "Method/DCStopVerbose", 0x30, LevelInformational},
		{nettrace.Rundown, IDRundownThreadDC, "Loader/ThreadDCStop", 0x10800, LevelInformational},
	} {
		s := Lookup(tc.p, tc.id)
		if s == nil {
			t.Errorf("%v %d: no spec", tc.p, tc.id)
			continue
		}
		if s.Name != tc.name || s.Keywords() != tc.kw || s.Level() != tc.level {
			t.Errorf("%v %d: %s keywords 0x%X level %d; want %s 0x%X level %d", tc.p, tc.id, s.Name, s.Keywords(), s.Level(), tc.name, tc.kw, tc.level)
		}
	}
}

// Every row of the runtime's and the rundown provider's has a level of
// the manifest's, and every row is found under its provider's name and,
// for the runtime's providers, its kind.
func TestSpecRows(t *testing.T) {
	n := 0
	Specs(func(s *Spec) {
		n++
		if LookupProvider(s.ProviderName, s.ID) != s {
			t.Errorf("%s (%s %d) not found by its provider's name", s.Name, s.ProviderName, s.ID)
		}
		if s.Provider == nettrace.NotRuntime {
			return
		}
		if s.ProviderName != s.Provider.Name() || Lookup(s.Provider, s.ID) != s {
			t.Errorf("%s: provider %q, kind %v", s.Name, s.ProviderName, s.Provider)
		}
		switch s.Level() {
		case LevelLogAlways, LevelError, LevelInformational, LevelVerbose:
		default:
			t.Errorf("%s: level %d", s.Name, s.Level())
		}
	})
	if n < 200 {
		t.Errorf("%d specs", n)
	}
}

// testRows are registered from this file as another provider's would be
// from its own (an EventSource's: its name, not a runtime kind).
var _ = registerProvider("Clrspy-Test-Provider", []row{
	{nettrace.NotRuntime, 3, "Test/Three", 0x4, LevelVerbose, none},
	{nettrace.NotRuntime, 4, "Test/Four", 0x4, LevelInformational, dec(1, DecodeGCNoUserData)},
})

func TestRegisterFromAnotherFile(t *testing.T) {
	s := LookupProvider("Clrspy-Test-Provider", 3)
	if s == nil || s.Name != "Test/Three" || s.Keywords() != 0x4 || s.Level() != LevelVerbose || s.Decodes() {
		t.Fatalf("registered row: %+v", s)
	}
	if Lookup(nettrace.NotRuntime, 3) != nil || LookupProvider("Clrspy-Test-Provider", 5) != nil {
		t.Error("a lookup found what was not registered")
	}
	// Decoded through the table by the provider's name.
	ev := &nettrace.Event{Meta: &nettrace.Metadata{Provider: "Clrspy-Test-Provider", EventID: 4, Version: 1}, Payload: []byte{7, 0}}
	if v, err := Decode(ev, 8); err != nil || v != (GCNoUserData{ClrInstanceID: 7}) || !HasDecoder(ev.Meta) {
		t.Errorf("another provider's event: %+v, %v", v, err)
	}
	ev.Meta.Provider = "Other"
	if _, err := Decode(ev, 8); err != ErrNoDecoder {
		t.Errorf("an unknown provider's event: %v", err)
	}
	// Not one of the runtime's: no runtime provider entry asks for it.
	if p := ProvidersFor(func(m *nettrace.Metadata) bool { return m.Name == "Test/Three" }); p != nil {
		t.Errorf("providers %+v", p)
	}
}

func ids(p nettrace.ProviderKind, want ...uint32) func(*nettrace.Metadata) bool {
	return func(m *nettrace.Metadata) bool {
		if m.Runtime != p {
			return false
		}
		for _, id := range want {
			if m.EventID == id {
				return true
			}
		}
		return false
	}
}

func TestProvidersFor(t *testing.T) {
	rt := func(kw uint64, level uint8) []ipc.Provider {
		return []ipc.Provider{{Name: nettrace.ProviderRuntime, Keywords: kw, Level: level}}
	}
	for _, tc := range []struct {
		name  string
		wants []func(*nettrace.Metadata) bool
		want  []ipc.Provider
	}{
		{"nothing", nil, nil},
		{"no runtime event", []func(*nettrace.Metadata) bool{ids(nettrace.SampleProfiler, IDThreadSample)}, nil},
		{"GC events", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, IDGCStart, IDGCEnd, IDGCHeapStats)}, rt(0x1, LevelInformational)},
		{"a verbose event raises the level", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, IDGCStart), ids(nettrace.Runtime, IDGCAllocationTick)}, rt(0x1, LevelVerbose)},
		// Alone, ExceptionThrown needs either of its keywords: both are
		// taken (the manifest's whole mask), at its level (Error).
		{"thrown alone", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, IDExceptionThrown)}, rt(0x200008000, LevelError)},
		// With the handling events ExceptionKeyword covers it: no
		// MonitoringKeyword.
		{"thrown and caught", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, IDExceptionThrown, IDExceptionCatchStart)}, rt(0x8000, LevelInformational)},
		// ThreadCreated (ADRM | Threading) is covered by the pool's
		// Threading events.
		{"thread created with pool events", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, IDThreadCreated, IDThreadPoolWorkerThreadStart)}, rt(0x10000, LevelInformational)},
		{"rundown events are not the runtime provider's", []func(*nettrace.Metadata) bool{ids(nettrace.Rundown, IDRundownMethodDCEndVerbose)}, nil},
		{"keyword-less event", []func(*nettrace.Metadata) bool{ids(nettrace.Runtime, 187)}, rt(0, LevelInformational)},
	} {
		got := ProvidersFor(tc.wants...)
		if len(got) != len(tc.want) || len(got) == 1 && got[0] != tc.want[0] {
			t.Errorf("%s: %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

// The stop-time rundown clrspy asks for (ipc.DefaultRundownKeyword)
// enables the rundown's method and module events the symbol tables read;
// the rundown's ThreadDC (locks' owner map) needs a keyword it does not
// have, so lock owners come from the runtime provider's ThreadCreated.
func TestRundownFor(t *testing.T) {
	sym := ids(nettrace.Rundown, IDRundownMethodDCStartVerbose, IDRundownMethodDCEndVerbose, IDRundownModuleDCStart,
		IDRundownModuleDCEnd, IDRundownDomainModuleDCEnd, IDRundownDomainModuleDCStart)
	kw, level, ok := RundownFor(sym)
	if !ok || kw != 0x38 || level != LevelInformational {
		t.Fatalf("RundownFor(symbols) = 0x%X, %d, %v; want 0x38, informational", kw, level, ok)
	}
	if kw&^ipc.DefaultRundownKeyword != 0 {
		t.Errorf("the default rundown keyword 0x%X lacks 0x%X of the symbol events", ipc.DefaultRundownKeyword, kw&^ipc.DefaultRundownKeyword)
	}
	kw, _, _ = RundownFor(ids(nettrace.Rundown, IDRundownThreadDC))
	if kw != 0x10800 || kw&ipc.DefaultRundownKeyword != 0 {
		t.Errorf("RundownFor(ThreadDC) = 0x%X (default rundown 0x%X); want 0x10800, not in the default", kw, ipc.DefaultRundownKeyword)
	}
}
