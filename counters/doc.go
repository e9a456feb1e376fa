// Package counters owns the runtime's own counters: what dotnet-counters
// shows. It reads them from two sources (Providers):
//
//   - the System.Runtime EventCounters (every runtime since .NET Core 3.0):
//     the EventSource "System.Runtime" with EventCounterIntervalSec=N writes
//     one self-describing "EventCounters" event per counter and interval, a
//     "Mean" payload (a polled value: working-set, assembly-count, ...) or a
//     "Sum" payload (the increment of a cumulative value over the interval:
//     exception-count, alloc-rate, ...);
//   - with Options.Meter, the System.Runtime meter (.NET 9 and later; off
//     by default: a target exiting soon after such a session starts may
//     hang, see Options.Meter) through the
//     "System.Diagnostics.Metrics" EventSource (SessionId, Metrics,
//     RefreshInterval, MaxTimeSeries, MaxHistograms arguments), whose
//     CounterRateValuePublished, UpDownCounterRateValuePublished,
//     GaugeValuePublished and HistogramValuePublished events carry the
//     OpenTelemetry semantic-convention instruments (dotnet.exceptions,
//     dotnet.gc.collections, ...) with their values as invariant-culture
//     strings.
//
// Result presents both under one set of names: the OpenTelemetry .NET
// runtime semantic-convention name when one exists (the meter's own name;
// for an EventCounter, the Mappings table), else the counter's own name.
// Once the runtime's meter publishes (.NET 9+), it is the only source of
// semantic-convention names and the EventCounters mapped to them are
// dropped, so a consumer sees the same names on .NET 8 and .NET 10 and a
// series never changes source midway.
// The difference that remains is documented per Metric: a counter's total
// runs from the process start (FromStart) or from the session's start (an
// EventCounter's increments, a meter Counter aggregated by the session).
//
// Event does not allocate in steady state: payloads are walked in place
// from their metadata (one plan per event type), series are found by their
// raw UTF-16 key, numbers parsed from a scratch buffer. Memory is bounded
// by Options.MaxSeries. No I/O.
package counters
