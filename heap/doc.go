// Package heap follows sampled objects from allocation to death across
// compacting GCs. It owns the replay of the GC's movement reports: the
// runtime describes a GC's effect as contiguous address ranges (moved
// old→new, or surviving in place), not per object, so an address is only
// meaningful after every earlier GC's ranges have been applied to it.
//
// The Tracker is a state machine over *nettrace.Event (no I/O): sampled
// allocations (GCAllocationTick v3+, AllocationSampled, GCSampledObject-
// Allocation High/Low, names from BulkType) create objects; each GC's
// condemned generation (GCStart), generation bounds (GCGenerationRange) and
// moved/surviving ranges (GCBulkMovedObjectRanges/GCBulkSurvivingObject-
// Ranges, several events per GC and per heap under server GC) are collected
// until the GC is over and then applied at once: covered objects move or
// stay and are promoted, condemned objects no range covers die.
//
// The design follows PerfView's GCHeapSimulator (see
// shared/docs/field-survey.md §2.3); the code is clrspy's own.
package heap
