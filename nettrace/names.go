package nettrace

// Runtime events carry empty names in their metadata, so tools name them
// from (provider, id). These are TraceEvent's "Task/Opcode" names, which
// PerfView's baselines and users know; ids absent here are shown as
// "EventID(N)".
var runtimeNames = map[uint32]string{
	1: "GC/Start", 2: "GC/Stop", 3: "GC/RestartEEStop", 4: "GC/HeapStats",
	5: "GC/CreateSegment", 6: "GC/FreeSegment", 7: "GC/RestartEEStart",
	8: "GC/SuspendEEStop", 9: "GC/SuspendEEStart", 10: "GC/AllocationTick",
	11: "GC/CreateConcurrentThread", 12: "GC/TerminateConcurrentThread",
	13: "GC/FinalizersStop", 14: "GC/FinalizersStart", 15: "Type/BulkType",
	16: "GC/BulkRootEdge", 17: "GC/BulkRootConditionalWeakTableElementEdge",
	18: "GC/BulkNode", 19: "GC/BulkEdge", 20: "GC/SampledObjectAllocationHigh",
	21: "GC/BulkSurvivingObjectRanges", 22: "GC/BulkMovedObjectRanges",
	23: "GC/GenerationRange", 25: "GC/MarkStackRoots", 26: "GC/MarkFinalizeQueueRoots",
	27: "GC/MarkHandles", 28: "GC/MarkOlderGenerationRoots", 29: "GC/FinalizeObject",
	30: "GC/SetGCHandle", 31: "GC/DestoryGCHandle", 32: "GC/SampledObjectAllocationLow",
	33: "GC/PinObjectAtGCTime", 35: "GC/Triggered", 36: "GC/BulkRootCCW",
	37: "GC/BulkRCW", 38: "GC/BulkRootStaticVar", 39: "GC/DynamicEvent",
	40: "IOThreadCreation/Start", 41: "IOThreadCreation/Stop",
	42: "IOThreadRetirement/Start", 43: "IOThreadRetirement/Stop",
	44: "ThreadPoolSuspend/Suspend", 45: "ThreadPoolSuspend/Resume",
	46: "ThreadPoolWorkerThreadCreation/Start", 47: "ThreadPoolWorkerThreadCreation/Stop",
	48: "ThreadPoolWorkerThreadRetirement/Start", 49: "ThreadPoolWorkerThreadRetirement/Stop",
	50: "ThreadPoolWorkerThread/Start", 51: "ThreadPoolWorkerThread/Stop",
	52: "ThreadPoolWorkerThreadRetirement/Start", 53: "ThreadPoolWorkerThreadRetirement/Stop",
	54: "ThreadPoolWorkerThreadAdjustment/Sample", 55: "ThreadPoolWorkerThreadAdjustment/Adjustment",
	56: "ThreadPoolWorkerThreadAdjustment/Stats", 57: "ThreadPoolWorkerThread/Wait",
	58: "YieldProcessorMeasurement/Info", 59: "ThreadPoolMinMaxThreads/Info",
	60: "ThreadPoolWorkingThreadCount/Start", 61: "ThreadPool/Enqueue", 62: "ThreadPool/Dequeue",
	63: "ThreadPool/IOEnqueue", 64: "ThreadPool/IODequeue", 65: "ThreadPool/IOPack",
	70: "Thread/Creating", 71: "Thread/Running", 72: "Method/MethodDetails",
	73: "TypeLoad/Start", 74: "TypeLoad/Stop",
	80: "Exception/Start", 81: "Contention/Start", 82: "ClrStack/Walk",
	83: "AppDomainResourceManagement/MemAllocated", 84: "AppDomainResourceManagement/MemSurvived",
	85: "AppDomainResourceManagement/ThreadCreated", 86: "AppDomainResourceManagement/ThreadTerminated",
	87: "AppDomainResourceManagement/DomainEnter", 88: "ILStub/StubGenerated",
	89: "ILStub/StubCacheHit", 90: "Contention/LockCreated", 91: "Contention/Stop",
	135: "Method/DCStartCompleteV2", 136: "Method/DCEndCompleteV2",
	137: "Method/DCStartV2", 138: "Method/DCStopV2", 139: "Method/DCStartVerboseV2",
	140: "Method/DCStopVerboseV2", 141: "Method/Load", 142: "Method/Unload",
	143: "Method/LoadVerbose", 144: "Method/UnloadVerbose", 145: "Method/JittingStarted",
	146: "Method/MemoryAllocatedForJitCode", 151: "Loader/DomainModuleLoad",
	152: "Loader/ModuleLoad", 153: "Loader/ModuleUnload", 154: "Loader/AssemblyLoad",
	155: "Loader/AssemblyUnload", 156: "Loader/AppDomainLoad", 157: "Loader/AppDomainUnload",
	158: "Loader/ModuleRangeLoad", 159: "Method/R2RGetEntryPoint",
	160: "Method/R2RGetEntryPointStart", 185: "Method/InliningSucceeded",
	186: "Method/InliningFailedAnsi", 187: "Runtime/Start", 188: "Method/TailCallSucceeded",
	189: "Method/TailCallFailedAnsi", 190: "Method/ILToNativeMap", 191: "Method/TailCallFailed",
	192: "Method/InliningFailed",
	// TraceEvent's baselines file both under the bare task name "GC".
	200: "GC/IncreaseMemoryPressure", 201: "GC/DecreaseMemoryPressure",
	202: "GC/MarkWithType", 203: "GC/Join", 204: "GC/PerHeapHistory",
	205: "GC/GlobalHeapHistory", 206: "GC/GenAwareBegin", 207: "GC/GenAwareEnd",
	208: "GC/LOHCompact", 209: "GC/FitBucketInfo",
	240: "DebugIPCEvent/Start", 241: "DebugIPCEvent/Stop",
	242: "DebugExceptionProcessing/Start", 243: "DebugExceptionProcessing/Stop",
	250: "ExceptionCatch/Start", 251: "ExceptionCatch/Stop",
	252: "ExceptionFinally/Start", 253: "ExceptionFinally/Stop",
	254: "ExceptionFilter/Start", 255: "ExceptionFilter/Stop", 256: "Exception/Stop",
	260: "CodeSymbols/Start", 270: "EventSource",
	280: "TieredCompilation/Settings", 281: "TieredCompilation/Pause",
	282: "TieredCompilation/Resume", 283: "TieredCompilation/BackgroundJitStart",
	284: "TieredCompilation/BackgroundJitStop",
	290: "AssemblyLoader/Start", 291: "AssemblyLoader/Stop",
	292: "AssemblyLoader/ResolutionAttempted",
	293: "AssemblyLoader/AssemblyLoadContextResolvingHandlerInvoked",
	294: "AssemblyLoader/AppDomainAssemblyResolveHandlerInvoked",
	295: "AssemblyLoader/AssemblyLoadFromResolveHandlerInvoked",
	296: "AssemblyLoader/KnownPathProbed", 297: "JitInstrumentationData/Info",
	298: "JitInstrumentationDataVerbose/Info", 299: "ProfilerMessage/Info",
	300: "ExecutionCheckpoint/ExecutionCheckpoint",
	301: "WaitHandleWait/Start", 302: "WaitHandleWait/Stop", 303: "AllocationSampled/Info",
}

var rundownNames = map[uint32]string{
	10:  "GC/SettingsRundown",
	141: "Method/DCStart", 142: "Method/DCStop", 143: "Method/DCStartVerbose",
	144: "Method/DCStopVerbose", 145: "Method/DCStartComplete", 146: "Method/DCStopComplete",
	147: "Method/DCStartInit", 148: "Method/DCStopInit",
	149: "Method/ILToNativeMapDCStart", 150: "Method/ILToNativeMapDCStop",
	151: "Loader/DomainModuleDCStart", 152: "Loader/DomainModuleDCStop",
	153: "Loader/ModuleDCStart", 154: "Loader/ModuleDCStop",
	155: "Loader/AssemblyDCStart", 156: "Loader/AssemblyDCStop",
	157: "Loader/AppDomainDCStart", 158: "Loader/AppDomainDCStop",
	159: "Loader/ThreadDCStop", 160: "Loader/ModuleRangeDCStart", 161: "Loader/ModuleRangeDCStop",
	187: "Runtime/Start", 280: "TieredCompilationRundown/SettingsDCStart",
	300: "ExecutionCheckpointRundown/ExecutionCheckpointDCEnd",
}

var privateNames = map[uint32]string{
	1: "GC/Decision", 2: "GC/Settings", 3: "GC/Optimized", 4: "GC/PerHeapHistory",
	5: "GC/GlobalHeapHistory", 6: "GC/FullNotify", 7: "GC/JoinPrivate",
	8: "GC/MarkStackRoots", 9: "GC/MarkFinalizeQueueRoots", 10: "GC/MarkHandles",
	11: "GC/MarkCards", 12: "GC/BGCBegin", 13: "GC/BGC1stNonCondStop",
	14: "GC/BGC1stConStop", 15: "GC/BGC2ndNonConBegin", 16: "GC/BGC2ndNonConStop",
	17: "GC/BGC2ndConBegin", 18: "GC/BGC2ndConStop", 19: "GC/BGCPlanStop",
	20: "GC/BGCSweepStop", 21: "GC/BGCDrainMark", 22: "GC/BGCRevisit",
	23: "GC/BGCOverflow", 24: "GC/BGCAllocWaitBegin", 25: "GC/BGCAllocWaitStop",
	26: "GC/GCFullNotify", 199: "GC/PinPlugAtGCTime",
}

// runtimeEventName returns the TraceEvent-style "Task/Opcode" name of a
// runtime-provider event, or "" when the table has none.
func runtimeEventName(provider string, id uint32) string {
	switch classifyProvider(provider) {
	case Runtime:
		return runtimeNames[id]
	case Rundown:
		return rundownNames[id]
	case Private:
		return privateNames[id]
	case SampleProfiler:
		if id == 0 {
			return "Thread/Sample"
		}
	}
	return ""
}
