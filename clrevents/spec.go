package clrevents

import (
	"strconv"

	"github.com/clrspy/clrspy/nettrace"
)

// Spec is what clrspy knows of one runtime event type: the provider that
// writes it, its id, its TraceEvent name ("Task/Opcode", the names
// PerfView's users know; the runtime writes empty names in its metadata)
// and the typed decoder, which handles every version of the payload (nil:
// the event is named, not decoded).
type Spec struct {
	Provider nettrace.ProviderKind
	ID       uint32
	Name     string
	decode   decodeFunc
}

// Decodes reports whether the package has a typed decoder for the event.
func (s *Spec) Decodes() bool { return s.decode != nil }

// specs is the one table of runtime events. Ids that code refers to have
// a constant (clrevents.go); the others are written here once.
var specs = [...]Spec{
	// Microsoft-Windows-DotNETRuntime
	{nettrace.Runtime, IDGCStart, "GC/Start", wrap(DecodeGCStart)},
	{nettrace.Runtime, IDGCEnd, "GC/Stop", wrap(DecodeGCEnd)},
	{nettrace.Runtime, IDGCRestartEEEnd, "GC/RestartEEStop", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCHeapStats, "GC/HeapStats", wrap(DecodeGCHeapStats)},
	{nettrace.Runtime, IDGCCreateSegment, "GC/CreateSegment", nil},
	{nettrace.Runtime, IDGCFreeSegment, "GC/FreeSegment", nil},
	{nettrace.Runtime, IDGCRestartEEBegin, "GC/RestartEEStart", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEEnd, "GC/SuspendEEStop", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCSuspendEEBegin, "GC/SuspendEEStart", wrap(DecodeGCSuspendEEBegin)},
	{nettrace.Runtime, IDGCAllocationTick, "GC/AllocationTick", wrap(DecodeAllocationTick)},
	{nettrace.Runtime, IDGCCreateConcurrentThread, "GC/CreateConcurrentThread", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCTerminateConcurrentThread, "GC/TerminateConcurrentThread", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDGCFinalizersEnd, "GC/FinalizersStop", nil},
	{nettrace.Runtime, IDGCFinalizersBegin, "GC/FinalizersStart", wrap(DecodeGCNoUserData)},
	{nettrace.Runtime, IDBulkType, "Type/BulkType", wrap(DecodeBulkType)},
	{nettrace.Runtime, 16, "GC/BulkRootEdge", nil},
	{nettrace.Runtime, 17, "GC/BulkRootConditionalWeakTableElementEdge", nil},
	{nettrace.Runtime, 18, "GC/BulkNode", nil},
	{nettrace.Runtime, 19, "GC/BulkEdge", nil},
	{nettrace.Runtime, IDGCSampledObjectAllocHigh, "GC/SampledObjectAllocationHigh", wrap(DecodeSampledObjectAllocation)},
	{nettrace.Runtime, IDGCBulkSurvivingObjectRanges, "GC/BulkSurvivingObjectRanges", wrap(DecodeBulkSurvivingRanges)},
	{nettrace.Runtime, IDGCBulkMovedObjectRanges, "GC/BulkMovedObjectRanges", wrap(DecodeBulkMovedRanges)},
	{nettrace.Runtime, IDGCGenerationRange, "GC/GenerationRange", wrap(DecodeGenerationRange)},
	{nettrace.Runtime, 25, "GC/MarkStackRoots", nil},
	{nettrace.Runtime, 26, "GC/MarkFinalizeQueueRoots", nil},
	{nettrace.Runtime, 27, "GC/MarkHandles", nil},
	{nettrace.Runtime, 28, "GC/MarkOlderGenerationRoots", nil},
	{nettrace.Runtime, 29, "GC/FinalizeObject", nil},
	{nettrace.Runtime, 30, "GC/SetGCHandle", nil},
	{nettrace.Runtime, 31, "GC/DestoryGCHandle", nil},
	{nettrace.Runtime, IDGCSampledObjectAllocLow, "GC/SampledObjectAllocationLow", wrap(DecodeSampledObjectAllocation)},
	{nettrace.Runtime, 33, "GC/PinObjectAtGCTime", nil},
	{nettrace.Runtime, IDGCTriggered, "GC/Triggered", wrap(DecodeGCTriggered)},
	{nettrace.Runtime, 36, "GC/BulkRootCCW", nil},
	{nettrace.Runtime, 37, "GC/BulkRCW", nil},
	{nettrace.Runtime, 38, "GC/BulkRootStaticVar", nil},
	{nettrace.Runtime, IDGCDynamicEvent, "GC/DynamicEvent", wrap(DecodeGCDynamicEvent)},
	{nettrace.Runtime, 40, "IOThreadCreation/Start", nil},
	{nettrace.Runtime, 41, "IOThreadCreation/Stop", nil},
	{nettrace.Runtime, 42, "IOThreadRetirement/Start", nil},
	{nettrace.Runtime, 43, "IOThreadRetirement/Stop", nil},
	{nettrace.Runtime, 44, "ThreadPoolSuspend/Suspend", nil},
	{nettrace.Runtime, 45, "ThreadPoolSuspend/Resume", nil},
	{nettrace.Runtime, 46, "ThreadPoolWorkerThreadCreation/Start", nil},
	{nettrace.Runtime, 47, "ThreadPoolWorkerThreadCreation/Stop", nil},
	{nettrace.Runtime, 48, "ThreadPoolWorkerThreadRetirement/Start", nil},
	{nettrace.Runtime, 49, "ThreadPoolWorkerThreadRetirement/Stop", nil},
	{nettrace.Runtime, 50, "ThreadPoolWorkerThread/Start", nil},
	{nettrace.Runtime, 51, "ThreadPoolWorkerThread/Stop", nil},
	{nettrace.Runtime, 52, "ThreadPoolWorkerThreadRetirement/Start", nil},
	{nettrace.Runtime, 53, "ThreadPoolWorkerThreadRetirement/Stop", nil},
	{nettrace.Runtime, 54, "ThreadPoolWorkerThreadAdjustment/Sample", nil},
	{nettrace.Runtime, 55, "ThreadPoolWorkerThreadAdjustment/Adjustment", nil},
	{nettrace.Runtime, 56, "ThreadPoolWorkerThreadAdjustment/Stats", nil},
	{nettrace.Runtime, 57, "ThreadPoolWorkerThread/Wait", nil},
	{nettrace.Runtime, 58, "YieldProcessorMeasurement/Info", nil},
	{nettrace.Runtime, 59, "ThreadPoolMinMaxThreads/Info", nil},
	{nettrace.Runtime, 60, "ThreadPoolWorkingThreadCount/Start", nil},
	{nettrace.Runtime, 61, "ThreadPool/Enqueue", nil},
	{nettrace.Runtime, 62, "ThreadPool/Dequeue", nil},
	{nettrace.Runtime, 63, "ThreadPool/IOEnqueue", nil},
	{nettrace.Runtime, 64, "ThreadPool/IODequeue", nil},
	{nettrace.Runtime, 65, "ThreadPool/IOPack", nil},
	{nettrace.Runtime, 70, "Thread/Creating", nil},
	{nettrace.Runtime, 71, "Thread/Running", nil},
	{nettrace.Runtime, 72, "Method/MethodDetails", nil},
	{nettrace.Runtime, 73, "TypeLoad/Start", nil},
	{nettrace.Runtime, 74, "TypeLoad/Stop", nil},
	{nettrace.Runtime, 80, "Exception/Start", nil},
	{nettrace.Runtime, IDContentionStart, "Contention/Start", wrap(DecodeContentionStart)},
	{nettrace.Runtime, 82, "ClrStack/Walk", nil},
	{nettrace.Runtime, 83, "AppDomainResourceManagement/MemAllocated", nil},
	{nettrace.Runtime, 84, "AppDomainResourceManagement/MemSurvived", nil},
	{nettrace.Runtime, IDThreadCreated, "AppDomainResourceManagement/ThreadCreated", wrap(DecodeThreadCreated)},
	{nettrace.Runtime, IDThreadTerminated, "AppDomainResourceManagement/ThreadTerminated", wrap(DecodeThreadTerminated)},
	{nettrace.Runtime, 87, "AppDomainResourceManagement/DomainEnter", nil},
	{nettrace.Runtime, 88, "ILStub/StubGenerated", nil},
	{nettrace.Runtime, 89, "ILStub/StubCacheHit", nil},
	{nettrace.Runtime, IDContentionLockCreated, "Contention/LockCreated", wrap(DecodeContentionLockCreated)},
	{nettrace.Runtime, IDContentionStop, "Contention/Stop", wrap(DecodeContentionStop)},
	{nettrace.Runtime, 135, "Method/DCStartCompleteV2", nil},
	{nettrace.Runtime, 136, "Method/DCEndCompleteV2", nil},
	{nettrace.Runtime, 137, "Method/DCStartV2", nil},
	{nettrace.Runtime, 138, "Method/DCStopV2", nil},
	{nettrace.Runtime, 139, "Method/DCStartVerboseV2", nil},
	{nettrace.Runtime, 140, "Method/DCStopVerboseV2", nil},
	{nettrace.Runtime, IDMethodLoad, "Method/Load", wrap(DecodeMethod)},
	{nettrace.Runtime, IDMethodUnload, "Method/Unload", wrap(DecodeMethod)},
	{nettrace.Runtime, IDMethodLoadVerbose, "Method/LoadVerbose", wrap(DecodeMethodVerbose)},
	{nettrace.Runtime, IDMethodUnloadVerbose, "Method/UnloadVerbose", wrap(DecodeMethodVerbose)},
	{nettrace.Runtime, 145, "Method/JittingStarted", nil},
	{nettrace.Runtime, 146, "Method/MemoryAllocatedForJitCode", nil},
	{nettrace.Runtime, IDDomainModuleLoad, "Loader/DomainModuleLoad", wrap(DecodeDomainModule)},
	{nettrace.Runtime, IDModuleLoad, "Loader/ModuleLoad", wrap(DecodeModule)},
	{nettrace.Runtime, IDModuleUnload, "Loader/ModuleUnload", wrap(DecodeModule)},
	{nettrace.Runtime, IDAssemblyLoad, "Loader/AssemblyLoad", nil},
	{nettrace.Runtime, 155, "Loader/AssemblyUnload", nil},
	{nettrace.Runtime, 156, "Loader/AppDomainLoad", nil},
	{nettrace.Runtime, 157, "Loader/AppDomainUnload", nil},
	{nettrace.Runtime, 158, "Loader/ModuleRangeLoad", nil},
	{nettrace.Runtime, 159, "Method/R2RGetEntryPoint", nil},
	{nettrace.Runtime, 160, "Method/R2RGetEntryPointStart", nil},
	{nettrace.Runtime, 185, "Method/InliningSucceeded", nil},
	{nettrace.Runtime, 186, "Method/InliningFailedAnsi", nil},
	{nettrace.Runtime, 187, "Runtime/Start", nil},
	{nettrace.Runtime, 188, "Method/TailCallSucceeded", nil},
	{nettrace.Runtime, 189, "Method/TailCallFailedAnsi", nil},
	{nettrace.Runtime, 190, "Method/ILToNativeMap", nil},
	{nettrace.Runtime, 191, "Method/TailCallFailed", nil},
	{nettrace.Runtime, 192, "Method/InliningFailed", nil},
	{nettrace.Runtime, 200, "GC/IncreaseMemoryPressure", nil},
	{nettrace.Runtime, 201, "GC/DecreaseMemoryPressure", nil},
	{nettrace.Runtime, IDGCMarkWithType, "GC/MarkWithType", wrap(DecodeGCMarkWithType)},
	{nettrace.Runtime, 203, "GC/Join", nil},
	{nettrace.Runtime, IDGCPerHeapHistory, "GC/PerHeapHistory", wrap(DecodeGCPerHeapHistory)},
	{nettrace.Runtime, IDGCGlobalHeapHistory, "GC/GlobalHeapHistory", wrap(DecodeGCGlobalHeapHistory)},
	{nettrace.Runtime, 206, "GC/GenAwareBegin", nil},
	{nettrace.Runtime, 207, "GC/GenAwareEnd", nil},
	{nettrace.Runtime, 208, "GC/LOHCompact", nil},
	{nettrace.Runtime, 209, "GC/FitBucketInfo", nil},
	{nettrace.Runtime, 240, "DebugIPCEvent/Start", nil},
	{nettrace.Runtime, 241, "DebugIPCEvent/Stop", nil},
	{nettrace.Runtime, 242, "DebugExceptionProcessing/Start", nil},
	{nettrace.Runtime, 243, "DebugExceptionProcessing/Stop", nil},
	{nettrace.Runtime, 250, "ExceptionCatch/Start", nil},
	{nettrace.Runtime, 251, "ExceptionCatch/Stop", nil},
	{nettrace.Runtime, 252, "ExceptionFinally/Start", nil},
	{nettrace.Runtime, 253, "ExceptionFinally/Stop", nil},
	{nettrace.Runtime, 254, "ExceptionFilter/Start", nil},
	{nettrace.Runtime, 255, "ExceptionFilter/Stop", nil},
	{nettrace.Runtime, 256, "Exception/Stop", nil},
	{nettrace.Runtime, 260, "CodeSymbols/Start", nil},
	{nettrace.Runtime, 270, "EventSource", nil},
	{nettrace.Runtime, 280, "TieredCompilation/Settings", nil},
	{nettrace.Runtime, 281, "TieredCompilation/Pause", nil},
	{nettrace.Runtime, 282, "TieredCompilation/Resume", nil},
	{nettrace.Runtime, 283, "TieredCompilation/BackgroundJitStart", nil},
	{nettrace.Runtime, 284, "TieredCompilation/BackgroundJitStop", nil},
	{nettrace.Runtime, 290, "AssemblyLoader/Start", nil},
	{nettrace.Runtime, 291, "AssemblyLoader/Stop", nil},
	{nettrace.Runtime, 292, "AssemblyLoader/ResolutionAttempted", nil},
	{nettrace.Runtime, 293, "AssemblyLoader/AssemblyLoadContextResolvingHandlerInvoked", nil},
	{nettrace.Runtime, 294, "AssemblyLoader/AppDomainAssemblyResolveHandlerInvoked", nil},
	{nettrace.Runtime, 295, "AssemblyLoader/AssemblyLoadFromResolveHandlerInvoked", nil},
	{nettrace.Runtime, 296, "AssemblyLoader/KnownPathProbed", nil},
	{nettrace.Runtime, 297, "JitInstrumentationData/Info", nil},
	{nettrace.Runtime, 298, "JitInstrumentationDataVerbose/Info", nil},
	{nettrace.Runtime, 299, "ProfilerMessage/Info", nil},
	{nettrace.Runtime, 300, "ExecutionCheckpoint/ExecutionCheckpoint", nil},
	{nettrace.Runtime, IDWaitHandleWaitStart, "WaitHandleWait/Start", wrap(DecodeWaitHandleWaitStart)},
	{nettrace.Runtime, IDWaitHandleWaitStop, "WaitHandleWait/Stop", wrap(DecodeWaitHandleWaitStop)},
	{nettrace.Runtime, IDAllocationSampled, "AllocationSampled/Info", wrap(DecodeAllocationSampled)},

	// Microsoft-Windows-DotNETRuntimeRundown
	{nettrace.Rundown, 10, "GC/SettingsRundown", nil},
	{nettrace.Rundown, 141, "Method/DCStart", nil},
	{nettrace.Rundown, 142, "Method/DCStop", nil},
	{nettrace.Rundown, IDRundownMethodDCStartVerbose, "Method/DCStartVerbose", wrap(DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownMethodDCEndVerbose, "Method/DCStopVerbose", wrap(DecodeMethodVerbose)},
	{nettrace.Rundown, IDRundownDCStartComplete, "Method/DCStartComplete", nil},
	{nettrace.Rundown, IDRundownDCEndComplete, "Method/DCStopComplete", nil},
	{nettrace.Rundown, IDRundownDCStartInit, "Method/DCStartInit", nil},
	{nettrace.Rundown, IDRundownDCEndInit, "Method/DCStopInit", nil},
	{nettrace.Rundown, 149, "Method/ILToNativeMapDCStart", nil},
	{nettrace.Rundown, 150, "Method/ILToNativeMapDCStop", nil},
	{nettrace.Rundown, IDRundownDomainModuleDCStart, "Loader/DomainModuleDCStart", wrap(DecodeDomainModule)},
	{nettrace.Rundown, IDRundownDomainModuleDCEnd, "Loader/DomainModuleDCStop", wrap(DecodeDomainModule)},
	{nettrace.Rundown, IDRundownModuleDCStart, "Loader/ModuleDCStart", wrap(DecodeModule)},
	{nettrace.Rundown, IDRundownModuleDCEnd, "Loader/ModuleDCStop", wrap(DecodeModule)},
	{nettrace.Rundown, 155, "Loader/AssemblyDCStart", nil},
	{nettrace.Rundown, 156, "Loader/AssemblyDCStop", nil},
	{nettrace.Rundown, 157, "Loader/AppDomainDCStart", nil},
	{nettrace.Rundown, 158, "Loader/AppDomainDCStop", nil},
	{nettrace.Rundown, IDRundownThreadDC, "Loader/ThreadDCStop", wrap(DecodeThreadCreated)},
	{nettrace.Rundown, 160, "Loader/ModuleRangeDCStart", nil},
	{nettrace.Rundown, 161, "Loader/ModuleRangeDCStop", nil},
	{nettrace.Rundown, 187, "Runtime/Start", nil},
	{nettrace.Rundown, 280, "TieredCompilationRundown/SettingsDCStart", nil},
	{nettrace.Rundown, 300, "ExecutionCheckpointRundown/ExecutionCheckpointDCEnd", nil},

	// Microsoft-Windows-DotNETRuntimePrivate
	{nettrace.Private, 1, "GC/Decision", nil},
	{nettrace.Private, 2, "GC/Settings", nil},
	{nettrace.Private, 3, "GC/Optimized", nil},
	{nettrace.Private, 4, "GC/PerHeapHistory", nil},
	{nettrace.Private, 5, "GC/GlobalHeapHistory", nil},
	{nettrace.Private, 6, "GC/FullNotify", nil},
	{nettrace.Private, 7, "GC/JoinPrivate", nil},
	{nettrace.Private, 8, "GC/MarkStackRoots", nil},
	{nettrace.Private, 9, "GC/MarkFinalizeQueueRoots", nil},
	{nettrace.Private, 10, "GC/MarkHandles", nil},
	{nettrace.Private, 11, "GC/MarkCards", nil},
	{nettrace.Private, 12, "GC/BGCBegin", nil},
	{nettrace.Private, 13, "GC/BGC1stNonCondStop", nil},
	{nettrace.Private, 14, "GC/BGC1stConStop", nil},
	{nettrace.Private, 15, "GC/BGC2ndNonConBegin", nil},
	{nettrace.Private, 16, "GC/BGC2ndNonConStop", nil},
	{nettrace.Private, 17, "GC/BGC2ndConBegin", nil},
	{nettrace.Private, 18, "GC/BGC2ndConStop", nil},
	{nettrace.Private, 19, "GC/BGCPlanStop", nil},
	{nettrace.Private, 20, "GC/BGCSweepStop", nil},
	{nettrace.Private, 21, "GC/BGCDrainMark", nil},
	{nettrace.Private, 22, "GC/BGCRevisit", nil},
	{nettrace.Private, 23, "GC/BGCOverflow", nil},
	{nettrace.Private, 24, "GC/BGCAllocWaitBegin", nil},
	{nettrace.Private, 25, "GC/BGCAllocWaitStop", nil},
	{nettrace.Private, 26, "GC/GCFullNotify", nil},
	{nettrace.Private, 199, "GC/PinPlugAtGCTime", nil},

	// Microsoft-DotNETCore-SampleProfiler
	{nettrace.SampleProfiler, IDThreadSample, "Thread/Sample", wrap(DecodeThreadSample)},
}

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
