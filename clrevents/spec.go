package clrevents

import (
	"strconv"
	"sync"

	"github.com/clrspy/clrspy/nettrace"
)

// Spec is what clrspy knows of one event type: the provider that writes
// it, its id, its TraceEvent name ("Task/Opcode", the names PerfView's
// users know; the runtime writes empty names in its metadata), the
// keywords and level that enable it (the runtime manifest's, ClrEtwAll.man,
// for the runtime and rundown providers: what a session must enable to get
// it, ProvidersFor) and the typed decoder with the newest payload version
// it reads (no decoder: the event is named, not decoded).
type Spec struct {
	Provider nettrace.ProviderKind // NotRuntime for another provider (ProviderName)
	// ProviderName is the provider's name (Provider.Name() for the
	// runtime's providers).
	ProviderName string
	ID           uint32
	Name         string
	dec          decoder

	keywords uint64
	level    uint8
}

// Keywords is the event's keyword mask: a session enables the event when
// its keywords share a bit with the mask (0: whatever the keywords).
func (s *Spec) Keywords() uint64 { return s.keywords }

// Level is the event's level (LevelVerbose: only a verbose session gets
// it).
func (s *Spec) Level() uint8 { return s.level }

// decoder is a typed decoder and the newest version it reads field by
// field. A later version is read as that one: the runtime only ever appends
// fields, so what it added is not read (Newer reports such events).
type decoder struct {
	f       decodeFunc
	version uint32
}

func dec[T any](version uint32, f func([]byte, uint32, int) (T, error)) decoder {
	return decoder{f: wrap(f), version: version}
}

// none marks a row whose event is named, not decoded.
var none decoder

// Decodes reports whether the package has a typed decoder for the event.
func (s *Spec) Decodes() bool { return s.dec.f != nil }

// Version is the newest payload version the decoder reads (ok false: there
// is no decoder, or s is nil: Lookup found no spec).
func (s *Spec) Version() (v uint32, ok bool) {
	if s == nil {
		return 0, false
	}
	return s.dec.version, s.dec.f != nil
}

// Newer reports whether version of event id of provider p is newer than
// the one clrspy's decoder reads (the fields added since are not read),
// with the version the decoder reads.
func Newer(p nettrace.ProviderKind, id, version uint32) (known uint32, newer bool) {
	known, ok := Lookup(p, id).Version()
	return known, ok && version > known
}

// row is one line of a table as written: provider, id, name, keywords,
// level, decoder (with its version).
type row struct {
	p        nettrace.ProviderKind
	id       uint32
	name     string
	keywords uint64
	level    uint8
	dec      decoder
}

// register adds a table's rows to the specs, from any file of the package
// (a package-level var initialiser: var _ = register([]row{...})); rows of a
// provider that is not the runtime's (an EventSource's) name it with
// registerProvider. The index is built on the first lookup, after every
// file's rows are in.
func register(rows []row) bool { return registerProvider("", rows) }

// registerProvider is register for the rows of provider name ("": each
// row's runtime provider).
func registerProvider(name string, rows []row) bool {
	for _, r := range rows {
		n := name
		if n == "" {
			n = r.p.Name()
		}
		specs = append(specs, Spec{Provider: r.p, ProviderName: n, ID: r.id, Name: r.name, dec: r.dec, keywords: r.keywords, level: r.level})
	}
	return true
}

// specs is every registered row, in registration order (Specs).
var specs []Spec

// The runtime's providers. Ids that code refers to have a constant
// (clrevents.go and the files of each event family); the others are
// written here once. Every row of the runtime and rundown providers has
// the manifest's keywords and level (TestManifestRows samples them; the
// event types of the fixtures have those the runtime wrote in their
// metadata, TestManifestMatchesFixtures).
var _ = register([]row{
	// Microsoft-Windows-DotNETRuntime
	{nettrace.Runtime, IDGCStart, "GC/Start", kwGC, LevelInformational, dec(2, DecodeGCStart)},
	{nettrace.Runtime, IDGCEnd, "GC/Stop", kwGC, LevelInformational, dec(1, DecodeGCEnd)},
	{nettrace.Runtime, IDGCRestartEEEnd, "GC/RestartEEStop", kwGC, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCHeapStats, "GC/HeapStats", kwGC, LevelInformational, dec(2, DecodeGCHeapStats)},
	{nettrace.Runtime, IDGCCreateSegment, "GC/CreateSegment", kwGC, LevelInformational, none},
	{nettrace.Runtime, IDGCFreeSegment, "GC/FreeSegment", kwGC, LevelInformational, none},
	{nettrace.Runtime, IDGCRestartEEBegin, "GC/RestartEEStart", kwGC, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEEnd, "GC/SuspendEEStop", kwGC, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEBegin, "GC/SuspendEEStart", kwGC, LevelInformational, dec(1, DecodeGCSuspendEEBegin)},
	{nettrace.Runtime, IDGCAllocationTick, "GC/AllocationTick", kwGC, LevelVerbose, dec(4, DecodeAllocationTick)},
	{nettrace.Runtime, IDGCCreateConcurrentThread, "GC/CreateConcurrentThread", kwGC | kwThreading, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCTerminateConcurrentThread, "GC/TerminateConcurrentThread", kwGC | kwThreading, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCFinalizersEnd, "GC/FinalizersStop", kwGC, LevelInformational, none},
	{nettrace.Runtime, IDGCFinalizersBegin, "GC/FinalizersStart", kwGC, LevelInformational, dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDBulkType, "Type/BulkType", kwType, LevelInformational, dec(0, DecodeBulkType)},
	{nettrace.Runtime, IDGCBulkRootEdge, "GC/BulkRootEdge", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkRootEdge)},
	{nettrace.Runtime, IDGCBulkRootCWTEdge, "GC/BulkRootConditionalWeakTableElementEdge", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkCWTEdge)},
	{nettrace.Runtime, IDGCBulkNode, "GC/BulkNode", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkNode)},
	{nettrace.Runtime, IDGCBulkEdge, "GC/BulkEdge", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkEdge)},
	{nettrace.Runtime, IDGCSampledObjectAllocHigh, "GC/SampledObjectAllocationHigh", kwGCAllocHigh, LevelInformational, dec(0, DecodeSampledObjectAllocation)},
	{nettrace.Runtime, IDGCBulkSurvivingObjectRanges, "GC/BulkSurvivingObjectRanges", kwGCSurvivalMovement, LevelInformational, dec(0, DecodeBulkSurvivingRanges)},
	{nettrace.Runtime, IDGCBulkMovedObjectRanges, "GC/BulkMovedObjectRanges", kwGCSurvivalMovement, LevelInformational, dec(0, DecodeBulkMovedRanges)},
	{nettrace.Runtime, IDGCGenerationRange, "GC/GenerationRange", kwGCSurvivalMovement, LevelInformational, dec(0, DecodeGenerationRange)},
	{nettrace.Runtime, 25, "GC/MarkStackRoots", kwGC, LevelInformational, none},
	{nettrace.Runtime, 26, "GC/MarkFinalizeQueueRoots", kwGC, LevelInformational, none},
	{nettrace.Runtime, 27, "GC/MarkHandles", kwGC, LevelInformational, none},
	{nettrace.Runtime, 28, "GC/MarkOlderGenerationRoots", kwGC, LevelInformational, none},
	{nettrace.Runtime, 29, "GC/FinalizeObject", kwGC, LevelVerbose, none},
	{nettrace.Runtime, 30, "GC/SetGCHandle", kwGCHandle, LevelInformational, none},
	{nettrace.Runtime, 31, "GC/DestoryGCHandle", kwGCHandle, LevelInformational, none},
	{nettrace.Runtime, IDGCSampledObjectAllocLow, "GC/SampledObjectAllocationLow", kwGCAllocLow, LevelInformational, dec(0, DecodeSampledObjectAllocation)},
	{nettrace.Runtime, 33, "GC/PinObjectAtGCTime", kwGC, LevelVerbose, none},
	{nettrace.Runtime, IDGCTriggered, "GC/Triggered", kwGC, LevelInformational, dec(0, DecodeGCTriggered)},
	{nettrace.Runtime, IDGCBulkRootCCW, "GC/BulkRootCCW", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkCOM)},
	{nettrace.Runtime, IDGCBulkRCW, "GC/BulkRCW", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkCOM)},
	{nettrace.Runtime, IDGCBulkRootStaticVar, "GC/BulkRootStaticVar", kwGCHeapDump, LevelInformational, dec(0, DecodeBulkStaticVar)},
	// The manifest says win:LogAlways; the runtime registers (and writes in
	// a trace's metadata) informational, which is what EventPipe checks.
	{nettrace.Runtime, IDGCDynamicEvent, "GC/DynamicEvent", kwGC | kwGCHandle | kwGCHeapDump | kwGCAllocHigh |
		kwGCSurvivalMovement | kwGCHeapCollect | kwGCHeapAndTypeNames | kwGCAllocLow, LevelInformational, dec(0, DecodeGCDynamicEvent)},
	{nettrace.Runtime, 40, "IOThreadCreation/Start", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 41, "IOThreadCreation/Stop", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 42, "IOThreadRetirement/Start", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 43, "IOThreadRetirement/Stop", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 44, "ThreadPoolSuspend/Suspend", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 45, "ThreadPoolSuspend/Resume", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 46, "ThreadPoolWorkerThreadCreation/Start", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 47, "ThreadPoolWorkerThreadCreation/Stop", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 48, "ThreadPoolWorkerThreadRetirement/Start", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 49, "ThreadPoolWorkerThreadRetirement/Stop", kwThreading, LevelInformational, none},
	{nettrace.Runtime, IDThreadPoolWorkerThreadStart, "ThreadPoolWorkerThread/Start", kwThreading, LevelInformational, dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, IDThreadPoolWorkerThreadStop, "ThreadPoolWorkerThread/Stop", kwThreading, LevelInformational, dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, 52, "ThreadPoolWorkerThreadRetirement/Start", kwThreading, LevelInformational, none},
	{nettrace.Runtime, 53, "ThreadPoolWorkerThreadRetirement/Stop", kwThreading, LevelInformational, none},
	{nettrace.Runtime, IDThreadPoolAdjustmentSample, "ThreadPoolWorkerThreadAdjustment/Sample", kwThreading, LevelInformational, dec(0, DecodeThreadPoolAdjustmentSample)},
	{nettrace.Runtime, IDThreadPoolAdjustmentAdjustment, "ThreadPoolWorkerThreadAdjustment/Adjustment", kwThreading, LevelInformational, dec(0, DecodeThreadPoolAdjustment)},
	{nettrace.Runtime, IDThreadPoolAdjustmentStats, "ThreadPoolWorkerThreadAdjustment/Stats", kwThreading, LevelVerbose, dec(0, DecodeThreadPoolAdjustmentStats)},
	{nettrace.Runtime, IDThreadPoolWorkerThreadWait, "ThreadPoolWorkerThread/Wait", kwThreading, LevelInformational, dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, 58, "YieldProcessorMeasurement/Info", kwThreading, LevelInformational, none},
	{nettrace.Runtime, IDThreadPoolMinMaxThreads, "ThreadPoolMinMaxThreads", kwThreading, LevelInformational, dec(0, DecodeThreadPoolMinMaxThreads)},
	{nettrace.Runtime, 60, "ThreadPoolWorkingThreadCount/Start", kwThreading, LevelVerbose, none},
	{nettrace.Runtime, 61, "ThreadPool/Enqueue", kwThreading | kwThreadTransfer, LevelVerbose, none},
	{nettrace.Runtime, 62, "ThreadPool/Dequeue", kwThreading | kwThreadTransfer, LevelVerbose, none},
	{nettrace.Runtime, 63, "ThreadPool/IOEnqueue", kwThreading | kwThreadTransfer, LevelVerbose, none},
	{nettrace.Runtime, 64, "ThreadPool/IODequeue", kwThreading | kwThreadTransfer, LevelVerbose, none},
	{nettrace.Runtime, 65, "ThreadPool/IOPack", kwThreading, LevelVerbose, none},
	{nettrace.Runtime, 70, "Thread/Creating", kwThreading | kwThreadTransfer, LevelInformational, none},
	{nettrace.Runtime, 71, "Thread/Running", kwThreading | kwThreadTransfer, LevelInformational, none},
	{nettrace.Runtime, 72, "Method/MethodDetails", kwMethodDiag, LevelInformational, none},
	{nettrace.Runtime, 73, "TypeLoad/Start", kwTypeDiag, LevelInformational, none},
	{nettrace.Runtime, 74, "TypeLoad/Stop", kwTypeDiag, LevelInformational, none},
	{nettrace.Runtime, IDExceptionThrown, "Exception/Start", kwException | kwMonitoring, LevelError, dec(1, DecodeExceptionThrown)},
	{nettrace.Runtime, IDContentionStart, "Contention/Start", kwContention, LevelInformational, dec(2, DecodeContentionStart)},
	{nettrace.Runtime, 82, "ClrStack/Walk", kwStack, LevelLogAlways, none},
	{nettrace.Runtime, 83, "AppDomainResourceManagement/MemAllocated", kwAppDomainResourceMgt, LevelInformational, none},
	{nettrace.Runtime, 84, "AppDomainResourceManagement/MemSurvived", kwAppDomainResourceMgt, LevelInformational, none},
	{nettrace.Runtime, IDThreadCreated, "AppDomainResourceManagement/ThreadCreated", kwAppDomainResourceMgt | kwThreading, LevelInformational, dec(0, DecodeThreadCreated)},
	{nettrace.Runtime, IDThreadTerminated, "AppDomainResourceManagement/ThreadTerminated", kwAppDomainResourceMgt | kwThreading, LevelInformational, dec(0, DecodeThreadTerminated)},
	{nettrace.Runtime, 87, "AppDomainResourceManagement/DomainEnter", kwAppDomainResourceMgt | kwThreading, LevelInformational, none},
	{nettrace.Runtime, 88, "ILStub/StubGenerated", kwInterop, LevelInformational, none},
	{nettrace.Runtime, 89, "ILStub/StubCacheHit", kwInterop, LevelInformational, none},
	{nettrace.Runtime, IDContentionLockCreated, "Contention/LockCreated", kwContention, LevelInformational, dec(0, DecodeContentionLockCreated)},
	{nettrace.Runtime, IDContentionStop, "Contention/Stop", kwContention, LevelInformational, dec(1, DecodeContentionStop)},
	{nettrace.Runtime, 135, "Method/DCStartCompleteV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, 136, "Method/DCEndCompleteV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, 137, "Method/DCStartV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, 138, "Method/DCStopV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, 139, "Method/DCStartVerboseV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, 140, "Method/DCStopVerboseV2", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Runtime, IDMethodLoad, "Method/Load", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethod)},
	{nettrace.Runtime, IDMethodUnload, "Method/Unload", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethod)},
	{nettrace.Runtime, IDMethodLoadVerbose, "Method/LoadVerbose", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethodVerbose)},
	{nettrace.Runtime, IDMethodUnloadVerbose, "Method/UnloadVerbose", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethodVerbose)},
	{nettrace.Runtime, 145, "Method/JittingStarted", kwJit, LevelVerbose, none},
	{nettrace.Runtime, 146, "Method/MemoryAllocatedForJitCode", kwJit, LevelVerbose, none},
	{nettrace.Runtime, IDDomainModuleLoad, "Loader/DomainModuleLoad", kwLoader, LevelInformational, dec(1, DecodeDomainModule)},
	{nettrace.Runtime, IDModuleLoad, "Loader/ModuleLoad", kwLoader | kwPerfTrack, LevelInformational, dec(2, DecodeModule)},
	{nettrace.Runtime, IDModuleUnload, "Loader/ModuleUnload", kwLoader | kwPerfTrack, LevelInformational, dec(2, DecodeModule)},
	{nettrace.Runtime, IDAssemblyLoad, "Loader/AssemblyLoad", kwLoader, LevelInformational, none},
	{nettrace.Runtime, 155, "Loader/AssemblyUnload", kwLoader, LevelInformational, none},
	{nettrace.Runtime, 156, "Loader/AppDomainLoad", kwLoader, LevelInformational, none},
	{nettrace.Runtime, 157, "Loader/AppDomainUnload", kwLoader, LevelInformational, none},
	{nettrace.Runtime, 158, "Loader/ModuleRangeLoad", kwPerfTrack, LevelInformational, none},
	{nettrace.Runtime, 159, "Method/R2RGetEntryPoint", kwCompilationDiag, LevelInformational, none},
	{nettrace.Runtime, 160, "Method/R2RGetEntryPointStart", kwCompilationDiag, LevelInformational, none},
	{nettrace.Runtime, 185, "Method/InliningSucceeded", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 186, "Method/InliningFailedAnsi", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 187, "Runtime/Start", 0, LevelInformational, none},
	{nettrace.Runtime, 188, "Method/TailCallSucceeded", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 189, "Method/TailCallFailedAnsi", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 190, "Method/ILToNativeMap", kwILToNativeMap, LevelVerbose, none},
	{nettrace.Runtime, 191, "Method/TailCallFailed", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 192, "Method/InliningFailed", kwJitTracing, LevelVerbose, none},
	{nettrace.Runtime, 200, "GC/IncreaseMemoryPressure", kwGC, LevelVerbose, none},
	{nettrace.Runtime, 201, "GC/DecreaseMemoryPressure", kwGC, LevelVerbose, none},
	{nettrace.Runtime, IDGCMarkWithType, "GC/MarkWithType", kwGC, LevelInformational, dec(0, DecodeGCMarkWithType)},
	{nettrace.Runtime, 203, "GC/Join", kwGC, LevelVerbose, none},
	{nettrace.Runtime, IDGCPerHeapHistory, "GC/PerHeapHistory", kwGC, LevelInformational, dec(3, DecodeGCPerHeapHistory)},
	{nettrace.Runtime, IDGCGlobalHeapHistory, "GC/GlobalHeapHistory", kwGC, LevelInformational, dec(4, DecodeGCGlobalHeapHistory)},
	{nettrace.Runtime, 206, "GC/GenAwareBegin", kwGCHeapDump, LevelInformational, none},
	{nettrace.Runtime, 207, "GC/GenAwareEnd", kwGCHeapDump, LevelInformational, none},
	{nettrace.Runtime, 208, "GC/LOHCompact", kwGC, LevelInformational, none},
	{nettrace.Runtime, 209, "GC/FitBucketInfo", kwGC, LevelVerbose, none},
	{nettrace.Runtime, 240, "DebugIPCEvent/Start", kwDebugger, LevelInformational, none},
	{nettrace.Runtime, 241, "DebugIPCEvent/Stop", kwDebugger, LevelInformational, none},
	{nettrace.Runtime, 242, "DebugExceptionProcessing/Start", kwDebugger, LevelInformational, none},
	{nettrace.Runtime, 243, "DebugExceptionProcessing/Stop", kwDebugger, LevelInformational, none},
	{nettrace.Runtime, IDExceptionCatchStart, "ExceptionCatch/Start", kwException, LevelInformational, dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionCatchStop, "ExceptionCatch/Stop", kwException, LevelInformational, dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionFinallyStart, "ExceptionFinally/Start", kwException, LevelInformational, dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionFinallyStop, "ExceptionFinally/Stop", kwException, LevelInformational, dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionFilterStart, "ExceptionFilter/Start", kwException, LevelInformational, dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionFilterStop, "ExceptionFilter/Stop", kwException, LevelInformational, dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionThrownStop, "Exception/Stop", kwException, LevelInformational, dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, 260, "CodeSymbols/Start", kwCodeSymbols, LevelVerbose, none},
	{nettrace.Runtime, 270, "EventSource", kwEventSource, LevelInformational, none},
	{nettrace.Runtime, 280, "TieredCompilation/Settings", kwCompilation, LevelInformational, none},
	{nettrace.Runtime, 281, "TieredCompilation/Pause", kwCompilation, LevelInformational, none},
	{nettrace.Runtime, 282, "TieredCompilation/Resume", kwCompilation, LevelInformational, none},
	{nettrace.Runtime, 283, "TieredCompilation/BackgroundJitStart", kwCompilation, LevelInformational, none},
	{nettrace.Runtime, 284, "TieredCompilation/BackgroundJitStop", kwCompilation, LevelInformational, none},
	{nettrace.Runtime, 290, "AssemblyLoader/Start", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 291, "AssemblyLoader/Stop", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 292, "AssemblyLoader/ResolutionAttempted", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 293, "AssemblyLoader/AssemblyLoadContextResolvingHandlerInvoked", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 294, "AssemblyLoader/AppDomainAssemblyResolveHandlerInvoked", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 295, "AssemblyLoader/AssemblyLoadFromResolveHandlerInvoked", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 296, "AssemblyLoader/KnownPathProbed", kwAssemblyLoader, LevelInformational, none},
	{nettrace.Runtime, 297, "JitInstrumentationData/Info", kwJitInstrumentation, LevelInformational, none},
	{nettrace.Runtime, 298, "JitInstrumentationDataVerbose/Info", kwJitInstrumentation, LevelInformational, none},
	{nettrace.Runtime, 299, "ProfilerMessage/Info", kwProfiler, LevelInformational, none},
	{nettrace.Runtime, 300, "ExecutionCheckpoint/ExecutionCheckpoint", kwPerfTrack, LevelInformational, none},
	{nettrace.Runtime, IDWaitHandleWaitStart, "WaitHandleWait/Start", kwWaitHandle, LevelVerbose, dec(0, DecodeWaitHandleWaitStart)},
	{nettrace.Runtime, IDWaitHandleWaitStop, "WaitHandleWait/Stop", kwWaitHandle, LevelVerbose, dec(0, DecodeWaitHandleWaitStop)},
	{nettrace.Runtime, IDAllocationSampled, "AllocationSampled/Info", kwAllocationSampling, LevelInformational, dec(0, DecodeAllocationSampled)},

	// Microsoft-Windows-DotNETRuntimeRundown
	{nettrace.Rundown, 10, "GC/SettingsRundown", 0, LevelInformational, none},
	{nettrace.Rundown, 141, "Method/DCStart", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Rundown, 142, "Method/DCStop", kwJit | kwNGen, LevelInformational, none},
	{nettrace.Rundown, IDRundownMethodDCStartVerbose, "Method/DCStartVerbose", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownMethodDCEndVerbose, "Method/DCStopVerbose", kwJit | kwNGen, LevelInformational, dec(2, DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownDCStartComplete, "Method/DCStartComplete", kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational, none},
	{nettrace.Rundown, IDRundownDCEndComplete, "Method/DCStopComplete", kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational, none},
	{nettrace.Rundown, IDRundownDCStartInit, "Method/DCStartInit", kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational, none},
	{nettrace.Rundown, IDRundownDCEndInit, "Method/DCStopInit", kwJit | kwILToNativeMap | kwNGen | kwLoader, LevelInformational, none},
	{nettrace.Rundown, 149, "Method/ILToNativeMapDCStart", kwILToNativeMap, LevelVerbose, none},
	{nettrace.Rundown, 150, "Method/ILToNativeMapDCStop", kwILToNativeMap, LevelVerbose, none},
	{nettrace.Rundown, IDRundownDomainModuleDCStart, "Loader/DomainModuleDCStart", kwLoader, LevelInformational, dec(1, DecodeDomainModule)},
	{nettrace.Rundown, IDRundownDomainModuleDCEnd, "Loader/DomainModuleDCStop", kwLoader, LevelInformational, dec(1, DecodeDomainModule)},
	{nettrace.Rundown, IDRundownModuleDCStart, "Loader/ModuleDCStart", kwLoader | kwPerfTrack, LevelInformational, dec(2, DecodeModule)},
	{nettrace.Rundown, IDRundownModuleDCEnd, "Loader/ModuleDCStop", kwLoader | kwPerfTrack, LevelInformational, dec(2, DecodeModule)},
	{nettrace.Rundown, 155, "Loader/AssemblyDCStart", kwLoader, LevelInformational, none},
	{nettrace.Rundown, 156, "Loader/AssemblyDCStop", kwLoader, LevelInformational, none},
	{nettrace.Rundown, 157, "Loader/AppDomainDCStart", kwLoader, LevelInformational, none},
	{nettrace.Rundown, 158, "Loader/AppDomainDCStop", kwLoader, LevelInformational, none},
	{nettrace.Rundown, IDRundownThreadDC, "Loader/ThreadDCStop", kwAppDomainResourceMgt | kwThreading, LevelInformational, dec(0, DecodeThreadCreated)},
	{nettrace.Rundown, 160, "Loader/ModuleRangeDCStart", kwPerfTrack, LevelInformational, none},
	{nettrace.Rundown, 161, "Loader/ModuleRangeDCStop", kwPerfTrack, LevelInformational, none},
	{nettrace.Rundown, 187, "Runtime/Start", 0, LevelInformational, none},
	{nettrace.Rundown, 280, "TieredCompilationRundown/SettingsDCStart", kwCompilation, LevelInformational, none},
	{nettrace.Rundown, 300, "ExecutionCheckpointRundown/ExecutionCheckpointDCEnd", 0, LevelInformational, none},

	// Microsoft-Windows-DotNETRuntimePrivate
	{nettrace.Private, 1, "GC/Decision", 0, LevelLogAlways, none},
	{nettrace.Private, 2, "GC/Settings", 0, LevelLogAlways, none},
	{nettrace.Private, 3, "GC/Optimized", 0, LevelLogAlways, none},
	{nettrace.Private, 4, "GC/PerHeapHistory", 0, LevelLogAlways, none},
	{nettrace.Private, 5, "GC/GlobalHeapHistory", 0, LevelLogAlways, none},
	{nettrace.Private, 6, "GC/FullNotify", 0, LevelLogAlways, none},
	{nettrace.Private, 7, "GC/JoinPrivate", 0, LevelLogAlways, none},
	{nettrace.Private, 8, "GC/MarkStackRoots", 0, LevelLogAlways, none},
	{nettrace.Private, 9, "GC/MarkFinalizeQueueRoots", 0, LevelLogAlways, none},
	{nettrace.Private, 10, "GC/MarkHandles", 0, LevelLogAlways, none},
	{nettrace.Private, 11, "GC/MarkCards", 0, LevelLogAlways, none},
	{nettrace.Private, 12, "GC/BGCBegin", 0, LevelLogAlways, none},
	{nettrace.Private, 13, "GC/BGC1stNonCondStop", 0, LevelLogAlways, none},
	{nettrace.Private, 14, "GC/BGC1stConStop", 0, LevelLogAlways, none},
	{nettrace.Private, 15, "GC/BGC2ndNonConBegin", 0, LevelLogAlways, none},
	{nettrace.Private, 16, "GC/BGC2ndNonConStop", 0, LevelLogAlways, none},
	{nettrace.Private, 17, "GC/BGC2ndConBegin", 0, LevelLogAlways, none},
	{nettrace.Private, 18, "GC/BGC2ndConStop", 0, LevelLogAlways, none},
	{nettrace.Private, 19, "GC/BGCPlanStop", 0, LevelLogAlways, none},
	{nettrace.Private, 20, "GC/BGCSweepStop", 0, LevelLogAlways, none},
	{nettrace.Private, 21, "GC/BGCDrainMark", 0, LevelLogAlways, none},
	{nettrace.Private, 22, "GC/BGCRevisit", 0, LevelLogAlways, none},
	{nettrace.Private, 23, "GC/BGCOverflow", 0, LevelLogAlways, none},
	{nettrace.Private, 24, "GC/BGCAllocWaitBegin", 0, LevelLogAlways, none},
	{nettrace.Private, 25, "GC/BGCAllocWaitStop", 0, LevelLogAlways, none},
	{nettrace.Private, 26, "GC/GCFullNotify", 0, LevelLogAlways, none},
	{nettrace.Private, 199, "GC/PinPlugAtGCTime", 0, LevelLogAlways, none},

	// Microsoft-DotNETCore-SampleProfiler
	{nettrace.SampleProfiler, IDThreadSample, "Thread/Sample", 0, LevelLogAlways, dec(0, DecodeThreadSample)},
})

type specKey struct {
	provider string
	id       uint32
}

var (
	indexOnce sync.Once
	specIndex map[specKey]*Spec
)

func index() map[specKey]*Spec {
	indexOnce.Do(func() {
		specIndex = make(map[specKey]*Spec, len(specs))
		for i := range specs {
			s := &specs[i]
			k := specKey{s.ProviderName, s.ID}
			if _, dup := specIndex[k]; dup {
				panic("clrevents: two specs for " + s.Name + " (id " + strconv.Itoa(int(s.ID)) + ")")
			}
			specIndex[k] = s
		}
	})
	return specIndex
}

// Lookup is the spec of event id of runtime provider p (nil: clrspy does
// not know it).
func Lookup(p nettrace.ProviderKind, id uint32) *Spec {
	if p == nettrace.NotRuntime {
		return nil
	}
	return index()[specKey{p.Name(), id}]
}

// LookupProvider is the spec of event id of the provider named provider,
// a runtime provider or another one with rows of its own (nil: clrspy
// does not know it).
func LookupProvider(provider string, id uint32) *Spec { return index()[specKey{provider, id}] }

// Specs calls fn for every known event type, in table order.
func Specs(fn func(*Spec)) {
	for i := range specs {
		fn(&specs[i])
	}
}

// name is the naming hook nettrace uses for runtime events.
func name(p nettrace.ProviderKind, id uint32) string {
	if s := Lookup(p, id); s != nil {
		return s.Name
	}
	return ""
}

func init() { nettrace.SetRuntimeEventNames(name) }
