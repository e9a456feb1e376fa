package clrevents

import (
	"strconv"

	"github.com/clrspy/clrspy/nettrace"
)

// Spec is what clrspy knows of one runtime event type: the provider that
// writes it, its id, its TraceEvent name ("Task/Opcode", the names
// PerfView's users know; the runtime writes empty names in its metadata)
// and the typed decoder with the newest payload version it reads, that of
// the runtime's manifest (ClrEtwAll.man) when the table was written (no
// decoder: the event is named, not decoded), and, for the runtime and
// rundown providers, the keywords and level the manifest gives the event
// (what a session must enable to get it: ProvidersFor).
type Spec struct {
	Provider nettrace.ProviderKind
	ID       uint32
	Name     string
	dec      decoder

	keywords   uint64
	level      uint8
	inManifest bool
}

// Keywords is the event's keyword mask in the runtime's manifest: a
// session enables the event when its keywords share a bit with the mask
// (0: whatever the keywords). 0 for events of no manifest row (the
// private provider, the sample profiler).
func (s *Spec) Keywords() uint64 { return s.keywords }

// Level is the event's level in the runtime's manifest (LevelVerbose:
// only a verbose session gets it).
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

// row is one line of the table as written: provider, id, name, decoder.
type row struct {
	p    nettrace.ProviderKind
	id   uint32
	name string
	dec  decoder
}

// table is the one table of runtime events. Ids that code refers to have
// a constant (clrevents.go); the others are written here once. The
// keywords and level of each event come from the manifest's rows
// (manifest.go), merged into the specs by provider and id.
var table = [...]row{
	// Microsoft-Windows-DotNETRuntime
	{nettrace.Runtime, IDGCStart, "GC/Start", dec(2, DecodeGCStart)},
	{nettrace.Runtime, IDGCEnd, "GC/Stop", dec(1, DecodeGCEnd)},
	{nettrace.Runtime, IDGCRestartEEEnd, "GC/RestartEEStop", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCHeapStats, "GC/HeapStats", dec(2, DecodeGCHeapStats)},
	{nettrace.Runtime, IDGCCreateSegment, "GC/CreateSegment", decoder{}},
	{nettrace.Runtime, IDGCFreeSegment, "GC/FreeSegment", decoder{}},
	{nettrace.Runtime, IDGCRestartEEBegin, "GC/RestartEEStart", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEEnd, "GC/SuspendEEStop", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEBegin, "GC/SuspendEEStart", dec(1, DecodeGCSuspendEEBegin)},
	{nettrace.Runtime, IDGCAllocationTick, "GC/AllocationTick", dec(4, DecodeAllocationTick)},
	{nettrace.Runtime, IDGCCreateConcurrentThread, "GC/CreateConcurrentThread", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCTerminateConcurrentThread, "GC/TerminateConcurrentThread", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCFinalizersEnd, "GC/FinalizersStop", decoder{}},
	{nettrace.Runtime, IDGCFinalizersBegin, "GC/FinalizersStart", dec(1, DecodeGCNoUserData)},
	{nettrace.Runtime, IDBulkType, "Type/BulkType", dec(0, DecodeBulkType)},
	{nettrace.Runtime, IDGCBulkRootEdge, "GC/BulkRootEdge", dec(0, DecodeBulkRootEdge)},
	{nettrace.Runtime, IDGCBulkRootCWTEdge, "GC/BulkRootConditionalWeakTableElementEdge", dec(0, DecodeBulkCWTEdge)},
	{nettrace.Runtime, IDGCBulkNode, "GC/BulkNode", dec(0, DecodeBulkNode)},
	{nettrace.Runtime, IDGCBulkEdge, "GC/BulkEdge", dec(0, DecodeBulkEdge)},
	{nettrace.Runtime, IDGCSampledObjectAllocHigh, "GC/SampledObjectAllocationHigh", dec(0, DecodeSampledObjectAllocation)},
	{nettrace.Runtime, IDGCBulkSurvivingObjectRanges, "GC/BulkSurvivingObjectRanges", dec(0, DecodeBulkSurvivingRanges)},
	{nettrace.Runtime, IDGCBulkMovedObjectRanges, "GC/BulkMovedObjectRanges", dec(0, DecodeBulkMovedRanges)},
	{nettrace.Runtime, IDGCGenerationRange, "GC/GenerationRange", dec(0, DecodeGenerationRange)},
	{nettrace.Runtime, 25, "GC/MarkStackRoots", decoder{}},
	{nettrace.Runtime, 26, "GC/MarkFinalizeQueueRoots", decoder{}},
	{nettrace.Runtime, 27, "GC/MarkHandles", decoder{}},
	{nettrace.Runtime, 28, "GC/MarkOlderGenerationRoots", decoder{}},
	{nettrace.Runtime, 29, "GC/FinalizeObject", decoder{}},
	{nettrace.Runtime, 30, "GC/SetGCHandle", decoder{}},
	{nettrace.Runtime, 31, "GC/DestoryGCHandle", decoder{}},
	{nettrace.Runtime, IDGCSampledObjectAllocLow, "GC/SampledObjectAllocationLow", dec(0, DecodeSampledObjectAllocation)},
	{nettrace.Runtime, 33, "GC/PinObjectAtGCTime", decoder{}},
	{nettrace.Runtime, IDGCTriggered, "GC/Triggered", dec(0, DecodeGCTriggered)},
	{nettrace.Runtime, IDGCBulkRootCCW, "GC/BulkRootCCW", dec(0, DecodeBulkCOM)},
	{nettrace.Runtime, IDGCBulkRCW, "GC/BulkRCW", dec(0, DecodeBulkCOM)},
	{nettrace.Runtime, IDGCBulkRootStaticVar, "GC/BulkRootStaticVar", dec(0, DecodeBulkStaticVar)},
	{nettrace.Runtime, IDGCDynamicEvent, "GC/DynamicEvent", dec(0, DecodeGCDynamicEvent)},
	{nettrace.Runtime, 40, "IOThreadCreation/Start", decoder{}},
	{nettrace.Runtime, 41, "IOThreadCreation/Stop", decoder{}},
	{nettrace.Runtime, 42, "IOThreadRetirement/Start", decoder{}},
	{nettrace.Runtime, 43, "IOThreadRetirement/Stop", decoder{}},
	{nettrace.Runtime, 44, "ThreadPoolSuspend/Suspend", decoder{}},
	{nettrace.Runtime, 45, "ThreadPoolSuspend/Resume", decoder{}},
	{nettrace.Runtime, 46, "ThreadPoolWorkerThreadCreation/Start", decoder{}},
	{nettrace.Runtime, 47, "ThreadPoolWorkerThreadCreation/Stop", decoder{}},
	{nettrace.Runtime, 48, "ThreadPoolWorkerThreadRetirement/Start", decoder{}},
	{nettrace.Runtime, 49, "ThreadPoolWorkerThreadRetirement/Stop", decoder{}},
	{nettrace.Runtime, IDThreadPoolWorkerThreadStart, "ThreadPoolWorkerThread/Start", dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, IDThreadPoolWorkerThreadStop, "ThreadPoolWorkerThread/Stop", dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, 52, "ThreadPoolWorkerThreadRetirement/Start", decoder{}},
	{nettrace.Runtime, 53, "ThreadPoolWorkerThreadRetirement/Stop", decoder{}},
	{nettrace.Runtime, IDThreadPoolAdjustmentSample, "ThreadPoolWorkerThreadAdjustment/Sample", dec(0, DecodeThreadPoolAdjustmentSample)},
	{nettrace.Runtime, IDThreadPoolAdjustmentAdjustment, "ThreadPoolWorkerThreadAdjustment/Adjustment", dec(0, DecodeThreadPoolAdjustment)},
	{nettrace.Runtime, IDThreadPoolAdjustmentStats, "ThreadPoolWorkerThreadAdjustment/Stats", dec(0, DecodeThreadPoolAdjustmentStats)},
	{nettrace.Runtime, IDThreadPoolWorkerThreadWait, "ThreadPoolWorkerThread/Wait", dec(0, DecodeThreadPoolWorker)},
	{nettrace.Runtime, 58, "YieldProcessorMeasurement/Info", decoder{}},
	{nettrace.Runtime, IDThreadPoolMinMaxThreads, "ThreadPoolMinMaxThreads", dec(0, DecodeThreadPoolMinMaxThreads)},
	{nettrace.Runtime, 60, "ThreadPoolWorkingThreadCount/Start", decoder{}},
	{nettrace.Runtime, 61, "ThreadPool/Enqueue", decoder{}},
	{nettrace.Runtime, 62, "ThreadPool/Dequeue", decoder{}},
	{nettrace.Runtime, 63, "ThreadPool/IOEnqueue", decoder{}},
	{nettrace.Runtime, 64, "ThreadPool/IODequeue", decoder{}},
	{nettrace.Runtime, 65, "ThreadPool/IOPack", decoder{}},
	{nettrace.Runtime, 70, "Thread/Creating", decoder{}},
	{nettrace.Runtime, 71, "Thread/Running", decoder{}},
	{nettrace.Runtime, 72, "Method/MethodDetails", decoder{}},
	{nettrace.Runtime, 73, "TypeLoad/Start", decoder{}},
	{nettrace.Runtime, 74, "TypeLoad/Stop", decoder{}},
	{nettrace.Runtime, IDExceptionThrown, "Exception/Start", dec(1, DecodeExceptionThrown)},
	{nettrace.Runtime, IDContentionStart, "Contention/Start", dec(2, DecodeContentionStart)},
	{nettrace.Runtime, 82, "ClrStack/Walk", decoder{}},
	{nettrace.Runtime, 83, "AppDomainResourceManagement/MemAllocated", decoder{}},
	{nettrace.Runtime, 84, "AppDomainResourceManagement/MemSurvived", decoder{}},
	{nettrace.Runtime, IDThreadCreated, "AppDomainResourceManagement/ThreadCreated", dec(0, DecodeThreadCreated)},
	{nettrace.Runtime, IDThreadTerminated, "AppDomainResourceManagement/ThreadTerminated", dec(0, DecodeThreadTerminated)},
	{nettrace.Runtime, 87, "AppDomainResourceManagement/DomainEnter", decoder{}},
	{nettrace.Runtime, 88, "ILStub/StubGenerated", decoder{}},
	{nettrace.Runtime, 89, "ILStub/StubCacheHit", decoder{}},
	{nettrace.Runtime, IDContentionLockCreated, "Contention/LockCreated", dec(0, DecodeContentionLockCreated)},
	{nettrace.Runtime, IDContentionStop, "Contention/Stop", dec(1, DecodeContentionStop)},
	{nettrace.Runtime, 135, "Method/DCStartCompleteV2", decoder{}},
	{nettrace.Runtime, 136, "Method/DCEndCompleteV2", decoder{}},
	{nettrace.Runtime, 137, "Method/DCStartV2", decoder{}},
	{nettrace.Runtime, 138, "Method/DCStopV2", decoder{}},
	{nettrace.Runtime, 139, "Method/DCStartVerboseV2", decoder{}},
	{nettrace.Runtime, 140, "Method/DCStopVerboseV2", decoder{}},
	{nettrace.Runtime, IDMethodLoad, "Method/Load", dec(2, DecodeMethod)},
	{nettrace.Runtime, IDMethodUnload, "Method/Unload", dec(2, DecodeMethod)},
	{nettrace.Runtime, IDMethodLoadVerbose, "Method/LoadVerbose", dec(2, DecodeMethodVerbose)},
	{nettrace.Runtime, IDMethodUnloadVerbose, "Method/UnloadVerbose", dec(2, DecodeMethodVerbose)},
	{nettrace.Runtime, 145, "Method/JittingStarted", decoder{}},
	{nettrace.Runtime, 146, "Method/MemoryAllocatedForJitCode", decoder{}},
	{nettrace.Runtime, IDDomainModuleLoad, "Loader/DomainModuleLoad", dec(1, DecodeDomainModule)},
	{nettrace.Runtime, IDModuleLoad, "Loader/ModuleLoad", dec(2, DecodeModule)},
	{nettrace.Runtime, IDModuleUnload, "Loader/ModuleUnload", dec(2, DecodeModule)},
	{nettrace.Runtime, IDAssemblyLoad, "Loader/AssemblyLoad", decoder{}},
	{nettrace.Runtime, 155, "Loader/AssemblyUnload", decoder{}},
	{nettrace.Runtime, 156, "Loader/AppDomainLoad", decoder{}},
	{nettrace.Runtime, 157, "Loader/AppDomainUnload", decoder{}},
	{nettrace.Runtime, 158, "Loader/ModuleRangeLoad", decoder{}},
	{nettrace.Runtime, 159, "Method/R2RGetEntryPoint", decoder{}},
	{nettrace.Runtime, 160, "Method/R2RGetEntryPointStart", decoder{}},
	{nettrace.Runtime, 185, "Method/InliningSucceeded", decoder{}},
	{nettrace.Runtime, 186, "Method/InliningFailedAnsi", decoder{}},
	{nettrace.Runtime, 187, "Runtime/Start", decoder{}},
	{nettrace.Runtime, 188, "Method/TailCallSucceeded", decoder{}},
	{nettrace.Runtime, 189, "Method/TailCallFailedAnsi", decoder{}},
	{nettrace.Runtime, 190, "Method/ILToNativeMap", decoder{}},
	{nettrace.Runtime, 191, "Method/TailCallFailed", decoder{}},
	{nettrace.Runtime, 192, "Method/InliningFailed", decoder{}},
	{nettrace.Runtime, 200, "GC/IncreaseMemoryPressure", decoder{}},
	{nettrace.Runtime, 201, "GC/DecreaseMemoryPressure", decoder{}},
	{nettrace.Runtime, IDGCMarkWithType, "GC/MarkWithType", dec(0, DecodeGCMarkWithType)},
	{nettrace.Runtime, 203, "GC/Join", decoder{}},
	{nettrace.Runtime, IDGCPerHeapHistory, "GC/PerHeapHistory", dec(3, DecodeGCPerHeapHistory)},
	{nettrace.Runtime, IDGCGlobalHeapHistory, "GC/GlobalHeapHistory", dec(4, DecodeGCGlobalHeapHistory)},
	{nettrace.Runtime, 206, "GC/GenAwareBegin", decoder{}},
	{nettrace.Runtime, 207, "GC/GenAwareEnd", decoder{}},
	{nettrace.Runtime, 208, "GC/LOHCompact", decoder{}},
	{nettrace.Runtime, 209, "GC/FitBucketInfo", decoder{}},
	{nettrace.Runtime, 240, "DebugIPCEvent/Start", decoder{}},
	{nettrace.Runtime, 241, "DebugIPCEvent/Stop", decoder{}},
	{nettrace.Runtime, 242, "DebugExceptionProcessing/Start", decoder{}},
	{nettrace.Runtime, 243, "DebugExceptionProcessing/Stop", decoder{}},
	{nettrace.Runtime, IDExceptionCatchStart, "ExceptionCatch/Start", dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionCatchStop, "ExceptionCatch/Stop", dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionFinallyStart, "ExceptionFinally/Start", dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionFinallyStop, "ExceptionFinally/Stop", dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionFilterStart, "ExceptionFilter/Start", dec(0, DecodeExceptionHandling)},
	{nettrace.Runtime, IDExceptionFilterStop, "ExceptionFilter/Stop", dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, IDExceptionThrownStop, "Exception/Stop", dec(0, DecodeExceptionStop)},
	{nettrace.Runtime, 260, "CodeSymbols/Start", decoder{}},
	{nettrace.Runtime, 270, "EventSource", decoder{}},
	{nettrace.Runtime, 280, "TieredCompilation/Settings", decoder{}},
	{nettrace.Runtime, 281, "TieredCompilation/Pause", decoder{}},
	{nettrace.Runtime, 282, "TieredCompilation/Resume", decoder{}},
	{nettrace.Runtime, 283, "TieredCompilation/BackgroundJitStart", decoder{}},
	{nettrace.Runtime, 284, "TieredCompilation/BackgroundJitStop", decoder{}},
	{nettrace.Runtime, 290, "AssemblyLoader/Start", decoder{}},
	{nettrace.Runtime, 291, "AssemblyLoader/Stop", decoder{}},
	{nettrace.Runtime, 292, "AssemblyLoader/ResolutionAttempted", decoder{}},
	{nettrace.Runtime, 293, "AssemblyLoader/AssemblyLoadContextResolvingHandlerInvoked", decoder{}},
	{nettrace.Runtime, 294, "AssemblyLoader/AppDomainAssemblyResolveHandlerInvoked", decoder{}},
	{nettrace.Runtime, 295, "AssemblyLoader/AssemblyLoadFromResolveHandlerInvoked", decoder{}},
	{nettrace.Runtime, 296, "AssemblyLoader/KnownPathProbed", decoder{}},
	{nettrace.Runtime, 297, "JitInstrumentationData/Info", decoder{}},
	{nettrace.Runtime, 298, "JitInstrumentationDataVerbose/Info", decoder{}},
	{nettrace.Runtime, 299, "ProfilerMessage/Info", decoder{}},
	{nettrace.Runtime, 300, "ExecutionCheckpoint/ExecutionCheckpoint", decoder{}},
	{nettrace.Runtime, IDWaitHandleWaitStart, "WaitHandleWait/Start", dec(0, DecodeWaitHandleWaitStart)},
	{nettrace.Runtime, IDWaitHandleWaitStop, "WaitHandleWait/Stop", dec(0, DecodeWaitHandleWaitStop)},
	{nettrace.Runtime, IDAllocationSampled, "AllocationSampled/Info", dec(0, DecodeAllocationSampled)},

	// Microsoft-Windows-DotNETRuntimeRundown
	{nettrace.Rundown, 10, "GC/SettingsRundown", decoder{}},
	{nettrace.Rundown, 141, "Method/DCStart", decoder{}},
	{nettrace.Rundown, 142, "Method/DCStop", decoder{}},
	{nettrace.Rundown, IDRundownMethodDCStartVerbose, "Method/DCStartVerbose", dec(2, DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownMethodDCEndVerbose, "Method/DCStopVerbose", dec(2, DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownDCStartComplete, "Method/DCStartComplete", decoder{}},
	{nettrace.Rundown, IDRundownDCEndComplete, "Method/DCStopComplete", decoder{}},
	{nettrace.Rundown, IDRundownDCStartInit, "Method/DCStartInit", decoder{}},
	{nettrace.Rundown, IDRundownDCEndInit, "Method/DCStopInit", decoder{}},
	{nettrace.Rundown, 149, "Method/ILToNativeMapDCStart", decoder{}},
	{nettrace.Rundown, 150, "Method/ILToNativeMapDCStop", decoder{}},
	{nettrace.Rundown, IDRundownDomainModuleDCStart, "Loader/DomainModuleDCStart", dec(1, DecodeDomainModule)},
	{nettrace.Rundown, IDRundownDomainModuleDCEnd, "Loader/DomainModuleDCStop", dec(1, DecodeDomainModule)},
	{nettrace.Rundown, IDRundownModuleDCStart, "Loader/ModuleDCStart", dec(2, DecodeModule)},
	{nettrace.Rundown, IDRundownModuleDCEnd, "Loader/ModuleDCStop", dec(2, DecodeModule)},
	{nettrace.Rundown, 155, "Loader/AssemblyDCStart", decoder{}},
	{nettrace.Rundown, 156, "Loader/AssemblyDCStop", decoder{}},
	{nettrace.Rundown, 157, "Loader/AppDomainDCStart", decoder{}},
	{nettrace.Rundown, 158, "Loader/AppDomainDCStop", decoder{}},
	{nettrace.Rundown, IDRundownThreadDC, "Loader/ThreadDCStop", dec(0, DecodeThreadCreated)},
	{nettrace.Rundown, 160, "Loader/ModuleRangeDCStart", decoder{}},
	{nettrace.Rundown, 161, "Loader/ModuleRangeDCStop", decoder{}},
	{nettrace.Rundown, 187, "Runtime/Start", decoder{}},
	{nettrace.Rundown, 280, "TieredCompilationRundown/SettingsDCStart", decoder{}},
	{nettrace.Rundown, 300, "ExecutionCheckpointRundown/ExecutionCheckpointDCEnd", decoder{}},

	// Microsoft-Windows-DotNETRuntimePrivate
	{nettrace.Private, 1, "GC/Decision", decoder{}},
	{nettrace.Private, 2, "GC/Settings", decoder{}},
	{nettrace.Private, 3, "GC/Optimized", decoder{}},
	{nettrace.Private, 4, "GC/PerHeapHistory", decoder{}},
	{nettrace.Private, 5, "GC/GlobalHeapHistory", decoder{}},
	{nettrace.Private, 6, "GC/FullNotify", decoder{}},
	{nettrace.Private, 7, "GC/JoinPrivate", decoder{}},
	{nettrace.Private, 8, "GC/MarkStackRoots", decoder{}},
	{nettrace.Private, 9, "GC/MarkFinalizeQueueRoots", decoder{}},
	{nettrace.Private, 10, "GC/MarkHandles", decoder{}},
	{nettrace.Private, 11, "GC/MarkCards", decoder{}},
	{nettrace.Private, 12, "GC/BGCBegin", decoder{}},
	{nettrace.Private, 13, "GC/BGC1stNonCondStop", decoder{}},
	{nettrace.Private, 14, "GC/BGC1stConStop", decoder{}},
	{nettrace.Private, 15, "GC/BGC2ndNonConBegin", decoder{}},
	{nettrace.Private, 16, "GC/BGC2ndNonConStop", decoder{}},
	{nettrace.Private, 17, "GC/BGC2ndConBegin", decoder{}},
	{nettrace.Private, 18, "GC/BGC2ndConStop", decoder{}},
	{nettrace.Private, 19, "GC/BGCPlanStop", decoder{}},
	{nettrace.Private, 20, "GC/BGCSweepStop", decoder{}},
	{nettrace.Private, 21, "GC/BGCDrainMark", decoder{}},
	{nettrace.Private, 22, "GC/BGCRevisit", decoder{}},
	{nettrace.Private, 23, "GC/BGCOverflow", decoder{}},
	{nettrace.Private, 24, "GC/BGCAllocWaitBegin", decoder{}},
	{nettrace.Private, 25, "GC/BGCAllocWaitStop", decoder{}},
	{nettrace.Private, 26, "GC/GCFullNotify", decoder{}},
	{nettrace.Private, 199, "GC/PinPlugAtGCTime", decoder{}},

	// Microsoft-DotNETCore-SampleProfiler
	{nettrace.SampleProfiler, IDThreadSample, "Thread/Sample", dec(0, DecodeThreadSample)},
}

// specs is the table with the manifest merged in (Lookup, Specs).
var specs = func() []Spec {
	kw := make(map[specKey]manifestRow, len(manifest))
	for _, m := range manifest {
		kw[specKey{m.p, m.id}] = m
	}
	out := make([]Spec, len(table))
	for i, r := range table {
		m, ok := kw[specKey{r.p, r.id}]
		out[i] = Spec{Provider: r.p, ID: r.id, Name: r.name, dec: r.dec, keywords: m.keywords, level: m.level, inManifest: ok}
	}
	return out
}()

type specKey struct {
	p  nettrace.ProviderKind
	id uint32
}

var specIndex = func() map[specKey]*Spec {
	m := make(map[specKey]*Spec, len(specs))
	for i := range specs {
		s := &specs[i]
		k := specKey{s.Provider, s.ID}
		if _, dup := m[k]; dup {
			panic("clrevents: two specs for " + s.Name + " (id " + strconv.Itoa(int(s.ID)) + ")")
		}
		m[k] = s
	}
	return m
}()

// Lookup is the spec of event id of provider p (nil: clrspy does not know
// it).
func Lookup(p nettrace.ProviderKind, id uint32) *Spec {
	if p == nettrace.NotRuntime {
		return nil
	}
	return specIndex[specKey{p, id}]
}

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
