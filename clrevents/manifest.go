package clrevents

import "github.com/clrspy/clrspy/nettrace"

// Levels of the runtime's manifest (ETW's win:* levels): an EventPipe
// session enables an event when the provider's level is at least the
// event's (LogAlways events at any level).
const (
	LevelLogAlways     uint8 = 0
	LevelError         uint8 = 2
	LevelInformational uint8 = 4
	LevelVerbose       uint8 = 5
)

// Keyword masks of the runtime's manifest that the rows below use (the
// rundown provider uses the same bits for its own keywords).
const (
	kwGC                   uint64 = 0x1
	kwGCHandle             uint64 = 0x2
	kwAssemblyLoader       uint64 = 0x4
	kwLoader               uint64 = 0x8
	kwJit                  uint64 = 0x10
	kwNGen                 uint64 = 0x20
	kwAppDomainResourceMgt uint64 = 0x800
	kwJitTracing           uint64 = 0x1000
	kwInterop              uint64 = 0x2000
	kwContention           uint64 = 0x4000
	kwException            uint64 = 0x8000
	kwThreading            uint64 = 0x10000
	kwILToNativeMap        uint64 = 0x20000
	kwType                 uint64 = 0x80000
	kwGCHeapDump           uint64 = 0x100000
	kwGCAllocHigh          uint64 = 0x200000
	kwGCSurvivalMovement   uint64 = 0x400000
	kwGCHeapCollect        uint64 = 0x800000
	kwGCHeapAndTypeNames   uint64 = 0x1000000
	kwGCAllocLow           uint64 = 0x2000000
	kwPerfTrack            uint64 = 0x20000000
	kwStack                uint64 = 0x40000000
	kwThreadTransfer       uint64 = 0x80000000
	kwDebugger             uint64 = 0x100000000
	kwMonitoring           uint64 = 0x200000000
	kwCodeSymbols          uint64 = 0x400000000
	kwEventSource          uint64 = 0x800000000
	kwCompilation          uint64 = 0x1000000000
	kwCompilationDiag      uint64 = 0x2000000000
	kwMethodDiag           uint64 = 0x4000000000
	kwTypeDiag             uint64 = 0x8000000000
	kwJitInstrumentation   uint64 = 0x10000000000
	kwProfiler             uint64 = 0x20000000000
	kwWaitHandle           uint64 = 0x40000000000
	kwAllocationSampling   uint64 = 0x80000000000
)

// manifestRow is what the runtime's manifest (src/coreclr/vm/ClrEtwAll.man)
// says of one event, for its newest version: the keywords (any one of
// them enables the event; 0: enabled whatever the keywords) and the level.
type manifestRow struct {
	p        nettrace.ProviderKind
	id       uint32
	keywords uint64
	level    uint8
}

// manifest is merged into the spec table at init (Spec.Keywords,
// Spec.Level), keyed by provider and id, so the table's rows stay
// {provider, id, name, decoder}. Every Runtime and Rundown row of the
// table has one entry here and every entry a row (TestManifestCoversSpecs);
// the 57 event types of the fixtures have the keywords and level the
// runtime wrote in their metadata (TestManifestMatchesFixtures).
var manifest = [...]manifestRow{
	// Microsoft-Windows-DotNETRuntime
	{nettrace.Runtime, 1, kwGC, LevelInformational},
	{nettrace.Runtime, 2, kwGC, LevelInformational},
	{nettrace.Runtime, 3, kwGC, LevelInformational},
	{nettrace.Runtime, 4, kwGC, LevelInformational},
	{nettrace.Runtime, 5, kwGC, LevelInformational},
	{nettrace.Runtime, 6, kwGC, LevelInformational},
	{nettrace.Runtime, 7, kwGC, LevelInformational},
	{nettrace.Runtime, 8, kwGC, LevelInformational},
	{nettrace.Runtime, 9, kwGC, LevelInformational},
	{nettrace.Runtime, 10, kwGC, LevelVerbose},
	{nettrace.Runtime, 11, kwGC | kwThreading, LevelInformational},
	{nettrace.Runtime, 12, kwGC | kwThreading, LevelInformational},
	{nettrace.Runtime, 13, kwGC, LevelInformational},
	{nettrace.Runtime, 14, kwGC, LevelInformational},
	{nettrace.Runtime, 15, kwType, LevelInformational},
	{nettrace.Runtime, 16, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 17, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 18, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 19, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 20, kwGCAllocHigh, LevelInformational},
	{nettrace.Runtime, 21, kwGCSurvivalMovement, LevelInformational},
	{nettrace.Runtime, 22, kwGCSurvivalMovement, LevelInformational},
	{nettrace.Runtime, 23, kwGCSurvivalMovement, LevelInformational},
	{nettrace.Runtime, 25, kwGC, LevelInformational},
	{nettrace.Runtime, 26, kwGC, LevelInformational},
	{nettrace.Runtime, 27, kwGC, LevelInformational},
	{nettrace.Runtime, 28, kwGC, LevelInformational},
	{nettrace.Runtime, 29, kwGC, LevelVerbose},
	{nettrace.Runtime, 30, kwGCHandle, LevelInformational},
	{nettrace.Runtime, 31, kwGCHandle, LevelInformational},
	{nettrace.Runtime, 32, kwGCAllocLow, LevelInformational},
	{nettrace.Runtime, 33, kwGC, LevelVerbose},
	{nettrace.Runtime, 35, kwGC, LevelInformational},
	{nettrace.Runtime, 36, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 37, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 38, kwGCHeapDump, LevelInformational},
	// The manifest says win:LogAlways; the runtime registers (and writes in
	// a trace's metadata) informational, which is what EventPipe checks.
	{nettrace.Runtime, 39, kwGC | kwGCHandle | kwGCHeapDump | kwGCAllocHigh | kwGCSurvivalMovement |
		kwGCHeapCollect | kwGCHeapAndTypeNames | kwGCAllocLow, LevelInformational},
	{nettrace.Runtime, 40, kwThreading, LevelInformational},
	{nettrace.Runtime, 41, kwThreading, LevelInformational},
	{nettrace.Runtime, 42, kwThreading, LevelInformational},
	{nettrace.Runtime, 43, kwThreading, LevelInformational},
	{nettrace.Runtime, 44, kwThreading, LevelInformational},
	{nettrace.Runtime, 45, kwThreading, LevelInformational},
	{nettrace.Runtime, 46, kwThreading, LevelInformational},
	{nettrace.Runtime, 47, kwThreading, LevelInformational},
	{nettrace.Runtime, 48, kwThreading, LevelInformational},
	{nettrace.Runtime, 49, kwThreading, LevelInformational},
	{nettrace.Runtime, 50, kwThreading, LevelInformational},
	{nettrace.Runtime, 51, kwThreading, LevelInformational},
	{nettrace.Runtime, 52, kwThreading, LevelInformational},
	{nettrace.Runtime, 53, kwThreading, LevelInformational},
	{nettrace.Runtime, 54, kwThreading, LevelInformational},
	{nettrace.Runtime, 55, kwThreading, LevelInformational},
	{nettrace.Runtime, 56, kwThreading, LevelVerbose},
	{nettrace.Runtime, 57, kwThreading, LevelInformational},
	{nettrace.Runtime, 58, kwThreading, LevelInformational},
	{nettrace.Runtime, 59, kwThreading, LevelInformational},
	{nettrace.Runtime, 60, kwThreading, LevelVerbose},
	{nettrace.Runtime, 61, kwThreading | kwThreadTransfer, LevelVerbose},
	{nettrace.Runtime, 62, kwThreading | kwThreadTransfer, LevelVerbose},
	{nettrace.Runtime, 63, kwThreading | kwThreadTransfer, LevelVerbose},
	{nettrace.Runtime, 64, kwThreading | kwThreadTransfer, LevelVerbose},
	{nettrace.Runtime, 65, kwThreading, LevelVerbose},
	{nettrace.Runtime, 70, kwThreading | kwThreadTransfer, LevelInformational},
	{nettrace.Runtime, 71, kwThreading | kwThreadTransfer, LevelInformational},
	{nettrace.Runtime, 72, kwMethodDiag, LevelInformational},
	{nettrace.Runtime, 73, kwTypeDiag, LevelInformational},
	{nettrace.Runtime, 74, kwTypeDiag, LevelInformational},
	{nettrace.Runtime, 80, kwException | kwMonitoring, LevelError},
	{nettrace.Runtime, 81, kwContention, LevelInformational},
	{nettrace.Runtime, 82, kwStack, LevelLogAlways},
	{nettrace.Runtime, 83, kwAppDomainResourceMgt, LevelInformational},
	{nettrace.Runtime, 84, kwAppDomainResourceMgt, LevelInformational},
	{nettrace.Runtime, 85, kwAppDomainResourceMgt | kwThreading, LevelInformational},
	{nettrace.Runtime, 86, kwAppDomainResourceMgt | kwThreading, LevelInformational},
	{nettrace.Runtime, 87, kwAppDomainResourceMgt | kwThreading, LevelInformational},
	{nettrace.Runtime, 88, kwInterop, LevelInformational},
	{nettrace.Runtime, 89, kwInterop, LevelInformational},
	{nettrace.Runtime, 90, kwContention, LevelInformational},
	{nettrace.Runtime, 91, kwContention, LevelInformational},
	{nettrace.Runtime, 135, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 136, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 137, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 138, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 139, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 140, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 141, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 142, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 143, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 144, kwJit | kwNGen, LevelInformational},
	{nettrace.Runtime, 145, kwJit, LevelVerbose},
	{nettrace.Runtime, 146, kwJit, LevelVerbose},
	{nettrace.Runtime, 151, kwLoader, LevelInformational},
	{nettrace.Runtime, 152, kwLoader | kwPerfTrack, LevelInformational},
	{nettrace.Runtime, 153, kwLoader | kwPerfTrack, LevelInformational},
	{nettrace.Runtime, 154, kwLoader, LevelInformational},
	{nettrace.Runtime, 155, kwLoader, LevelInformational},
	{nettrace.Runtime, 156, kwLoader, LevelInformational},
	{nettrace.Runtime, 157, kwLoader, LevelInformational},
	{nettrace.Runtime, 158, kwPerfTrack, LevelInformational},
	{nettrace.Runtime, 159, kwCompilationDiag, LevelInformational},
	{nettrace.Runtime, 160, kwCompilationDiag, LevelInformational},
	{nettrace.Runtime, 185, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 186, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 187, 0, LevelInformational},
	{nettrace.Runtime, 188, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 189, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 190, kwILToNativeMap, LevelVerbose},
	{nettrace.Runtime, 191, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 192, kwJitTracing, LevelVerbose},
	{nettrace.Runtime, 200, kwGC, LevelVerbose},
	{nettrace.Runtime, 201, kwGC, LevelVerbose},
	{nettrace.Runtime, 202, kwGC, LevelInformational},
	{nettrace.Runtime, 203, kwGC, LevelVerbose},
	{nettrace.Runtime, 204, kwGC, LevelInformational},
	{nettrace.Runtime, 205, kwGC, LevelInformational},
	{nettrace.Runtime, 206, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 207, kwGCHeapDump, LevelInformational},
	{nettrace.Runtime, 208, kwGC, LevelInformational},
	{nettrace.Runtime, 209, kwGC, LevelVerbose},
	{nettrace.Runtime, 240, kwDebugger, LevelInformational},
	{nettrace.Runtime, 241, kwDebugger, LevelInformational},
	{nettrace.Runtime, 242, kwDebugger, LevelInformational},
	{nettrace.Runtime, 243, kwDebugger, LevelInformational},
	{nettrace.Runtime, 250, kwException, LevelInformational},
	{nettrace.Runtime, 251, kwException, LevelInformational},
	{nettrace.Runtime, 252, kwException, LevelInformational},
	{nettrace.Runtime, 253, kwException, LevelInformational},
	{nettrace.Runtime, 254, kwException, LevelInformational},
	{nettrace.Runtime, 255, kwException, LevelInformational},
	{nettrace.Runtime, 256, kwException, LevelInformational},
	{nettrace.Runtime, 260, kwCodeSymbols, LevelVerbose},
	{nettrace.Runtime, 270, kwEventSource, LevelInformational},
	{nettrace.Runtime, 280, kwCompilation, LevelInformational},
	{nettrace.Runtime, 281, kwCompilation, LevelInformational},
	{nettrace.Runtime, 282, kwCompilation, LevelInformational},
	{nettrace.Runtime, 283, kwCompilation, LevelInformational},
	{nettrace.Runtime, 284, kwCompilation, LevelInformational},
	{nettrace.Runtime, 290, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 291, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 292, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 293, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 294, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 295, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 296, kwAssemblyLoader, LevelInformational},
	{nettrace.Runtime, 297, kwJitInstrumentation, LevelInformational},
	{nettrace.Runtime, 298, kwJitInstrumentation, LevelInformational},
	{nettrace.Runtime, 299, kwProfiler, LevelInformational},
	{nettrace.Runtime, 300, kwPerfTrack, LevelInformational},
	{nettrace.Runtime, 301, kwWaitHandle, LevelVerbose},
	{nettrace.Runtime, 302, kwWaitHandle, LevelVerbose},
	{nettrace.Runtime, 303, kwAllocationSampling, LevelInformational},

	// Microsoft-Windows-DotNETRuntimeRundown
	{nettrace.Rundown, 10, 0, LevelInformational},
	{nettrace.Rundown, 141, kwJit | kwNGen, LevelInformational},
	{nettrace.Rundown, 142, kwJit | kwNGen, LevelInformational},
	{nettrace.Rundown, 143, kwJit | kwNGen, LevelInformational},
	{nettrace.Rundown, 144, kwJit | kwNGen, LevelInformational},
	{nettrace.Rundown, 145, kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational},
	{nettrace.Rundown, 146, kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational},
	{nettrace.Rundown, 147, kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational},
	{nettrace.Rundown, 148, kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational},
	{nettrace.Rundown, 149, kwILToNativeMap, LevelVerbose},
	{nettrace.Rundown, 150, kwILToNativeMap, LevelVerbose},
	{nettrace.Rundown, 151, kwLoader, LevelInformational},
	{nettrace.Rundown, 152, kwLoader, LevelInformational},
	{nettrace.Rundown, 153, kwLoader | kwPerfTrack, LevelInformational},
	{nettrace.Rundown, 154, kwLoader | kwPerfTrack, LevelInformational},
	{nettrace.Rundown, 155, kwLoader, LevelInformational},
	{nettrace.Rundown, 156, kwLoader, LevelInformational},
	{nettrace.Rundown, 157, kwLoader, LevelInformational},
	{nettrace.Rundown, 158, kwLoader, LevelInformational},
	{nettrace.Rundown, 159, kwAppDomainResourceMgt | kwThreading, LevelInformational},
	{nettrace.Rundown, 160, kwPerfTrack, LevelInformational},
	{nettrace.Rundown, 161, kwPerfTrack, LevelInformational},
	{nettrace.Rundown, 187, 0, LevelInformational},
	{nettrace.Rundown, 280, kwCompilation, LevelInformational},
	{nettrace.Rundown, 300, 0, LevelInformational},
}
