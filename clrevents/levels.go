package clrevents

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
