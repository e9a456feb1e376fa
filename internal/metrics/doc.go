// Package metrics exports what clrspy knows about its targets as metrics:
// a prometheus.Collector (Prometheus text, OpenMetrics and protobuf with
// native histograms, through client_golang) and an OpenTelemetry metric
// Producer for OTLP push, both built from one table of metric families and
// one walk over a fleet (package fleet: the monitored targets, Targets,
// and the daemon's health).
//
// What it owns: the metric names, types, units, labels and help texts (the
// exposition contract, pinned by a golden test), the conversion of
// monitor snapshots and runtime counters into samples, and the histograms
// only it keeps (GC pauses by generation and GC type, time to suspend:
// classic buckets and a native, exponential one, fed GC by GC through
// GCHistograms.Observe: WatchGC keeps one per session of the fleet).
//
// Names follow the OpenTelemetry .NET runtime semantic conventions where
// one exists, spelled as the OpenTelemetry Prometheus exporter spells them
// (dots become underscores, the unit is suffixed, counters end in _total,
// attribute dotnet.gc.heap.generation becomes label
// dotnet_gc_heap_generation), so dashboards built for the runtime's own
// metrics work unchanged; clrspy_ names the rest. The same families go out
// over OTLP under their OpenTelemetry names and units.
//
// Series are built at each scrape from the fleet: a target the fleet no
// longer lists has no series left. No I/O besides the OTLP exporter's.
package metrics
