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
// # Background GCs
//
// A background GC condemns gen2, the LOH and the POH only; at its end the
// runtime walks every region's objects that are not free and reports them
// as surviving ranges, in a pause of its own before its GCEnd. The
// ephemeral GC it may start with, and the foreground GCs during it, have
// GCStarts of their own. A GC whose GCStart says Background but that ends
// inside the pause that started it ran as a blocking gen2 GC (the runtime
// could not start the background GC; GC.Blocking) and is replayed as one.
//
// # Cost
//
// Live objects are kept sorted by address, so a GC is one walk of the
// objects against the ranges sorted by old address, survivors written back
// in place. When the ranges kept the objects' order that is all; else the
// moved ones are counting-sorted by the destination order of their ranges
// and merged back: time linear in objects + ranges, no search per object,
// no allocation per GC once the scratch buffers have grown. A GC without
// any range (the movement keyword off) costs O(1): only the objects' age
// changes, and ages are kept as a clock.
//
// # Bounded memory: the reservoir
//
// Options.MaxObjects bounds the live objects followed at once. Every sample
// gets a priority w/u (w the bytes it stands for, u uniform in (0,1]) and is
// followed while its priority is above the threshold T; when the followed
// set outgrows MaxObjects, T rises to the priority that keeps 7/8 of it and
// the followed objects at or below it are evicted (priority sampling,
// Duffield, Lund and Thorup). An object followed to its death or to the end
// was kept with probability p = min(1, w/T_max), T_max the highest threshold
// it passed, independently of its fate, so weighting it by 1/p (Object.
// Weight) makes every sum over objects an unbiased estimate of the sum over
// all samples: per-type and per-site sampled counts, survival of one GC,
// promotion to gen2, death in gen2, bytes allocated, objects and bytes alive
// at the end, and the age-at-death histogram. The percentages are ratios of
// two such estimates (consistent, not exactly unbiased). Objects whose
// weight is above the threshold are always kept, so live-byte estimates
// stay tight where the bytes are. When the followed set falls under half
// its bound, T halves at each GC, so a quieter phase is sampled densely
// again. The error is that of a sample of size n from the population of
// samples: a proportion's standard error is about sqrt(P(1-P)/n) with n the
// followed samples of the group, e.g. ±1.6 points for 1,000 samples at 50 %;
// docs/PERFORMANCE.md measures it against the unbounded replay.
//
// Dead objects are folded into per-(type, stack) tallies when they die, so
// Result's tables do not need them; Result.Objects lists the live objects
// and the most recent MaxObjects dead ones (none with SkipObjects, for
// reports and live views made of the tables). Distinct stacks (MaxStacks),
// types (MaxTypes) and GC records (MaxGCs) are bounded too; what did not
// fit is counted in Stats and named as such in the tables, never
// attributed to another stack or type. With every limit at -1 the tracker
// keeps everything, as exact replays and tests need.
//
// The design follows PerfView's GCHeapSimulator (see
// shared/docs/field-survey.md §2.3); the code is clrspy's own.
package heap
