package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Kind is a family's metric type.
type Kind uint8

// Kinds.
const (
	Counter Kind = iota + 1
	Gauge
	Histogram
)

// Label is one label: its Prometheus name and its OpenTelemetry attribute
// key.
type Label struct{ Prom, OTel string }

// Labels of the families.
var (
	LabelPid        = Label{"pid", "process.pid"}
	LabelProcess    = Label{"process", "process.executable.name"}
	LabelGeneration = Label{"dotnet_gc_heap_generation", "dotnet.gc.heap.generation"}
	LabelGCType     = Label{"gc_type", "gc.type"}
	LabelReason     = Label{"reason", "reason"}
)

// Family is one metric family.
type Family struct {
	// Name is the Prometheus name; OTel and OTelUnit the OpenTelemetry
	// instrument's name and UCUM unit.
	Name, OTel, OTelUnit string
	Kind                 Kind
	Help                 string
	// Labels are the family's labels, in order; per-target families start
	// with pid and process.
	Labels []Label

	desc *prometheus.Desc
}

// promUnit is the OpenMetrics unit of a family (the suffix its name
// carries), from its UCUM unit.
func (f *Family) promUnit() string {
	switch f.OTelUnit {
	case "s":
		return "seconds"
	case "By":
		return "bytes"
	}
	return ""
}

func target(extra ...Label) []Label { return append([]Label{LabelPid, LabelProcess}, extra...) }

// meterAge is how long a process must have run before serve attaches for
// its session to ask for the runtime's meter (serve.MeterMinAge), in the
// help texts. seedAge is how old a process attached younger must be
// before serve's second, short session asks for the meter (serve's
// seedMinAge).
const (
	meterAge = "10 s"
	seedAge  = "30 s"
)

// The families clrspy measures itself, from the runtime's events.
var (
	famCollections = &Family{Name: "dotnet_gc_collections_total", OTel: "dotnet.gc.collections", OTelUnit: "{collection}", Kind: Counter,
		Help:   "Garbage collections since the process started, each counted once under the generation it collected (a gen2 GC is not also a gen0 one): the runtime's own count of those before clrspy attached (its System.Runtime meter, .NET 9+: asked for at the attach on processes that ran at least " + meterAge + ", by a short second session once younger ones have run " + seedAge + ") plus the GCs clrspy saw in the runtime's events. Left out while the GC events' own numbering (GCStart's Count) shows GCs before the attach whose generations the runtime has not said (earlier runtimes; a process attached younger than " + meterAge + " until it is " + seedAge + " old), never exported short; in listen mode the session begins with the process.",
		Labels: target(LabelGeneration)}
	famPauseTime = &Family{Name: "dotnet_gc_pause_time_seconds_total", OTel: "dotnet.gc.pause.time", OTelUnit: "s", Kind: Counter,
		Help:   "Time the runtime was stopped for GCs since the process started: before clrspy attached, the runtime's own total (GC.GetTotalPauseDuration, from its System.Runtime meter as for dotnet_gc_collections_total, and left out as it is while GCs before the attach are not said); then from each GC suspension's start (SuspendEEBegin) to the end of its restart (RestartEEEnd), every moment once (a foreground GC's stop inside a background GC's is not counted twice). clrspy_gc_pause_runtime_seconds_total is the runtime's own measure throughout; clrspy_gc_pause_seconds_sum sums the pauses clrspy saw as PerfView does.",
		Labels: target()}
	famPauseRuntime = &Family{Name: "clrspy_gc_pause_runtime_seconds_total", OTel: "clrspy.gc.pause_runtime", OTelUnit: "s", Kind: Counter,
		Help:   "GC pause time by the runtime's own definition, what GC.GetTotalPauseDuration (and the runtime meter's dotnet.gc.pause.time) adds: from the GC's start, after the threads are suspended, to the end of its restart; shorter than dotnet_gc_pause_time_seconds_total by the time to suspend. Since the process started where the runtime said its total (as for dotnet_gc_collections_total, and left out as it is while GCs before the attach are not said).",
		Labels: target()}
	famHeapSize = &Family{Name: "dotnet_gc_last_collection_heap_size_bytes", OTel: "dotnet.gc.last_collection.heap.size", OTelUnit: "By", Kind: Gauge,
		Help:   "Size of each generation after the latest GC the session saw (fragmentation included); before the first one, the runtime's own counter.",
		Labels: target(LabelGeneration)}
	famPause = &Family{Name: "clrspy_gc_pause_seconds", OTel: "clrspy.gc.pause", OTelUnit: "s", Kind: Histogram,
		Help:   "Individual GC pauses as PerfView measures them (SuspendEEBegin to RestartEEEnd, the stops of a background GC summed), by condemned generation and GC type (NonConcurrent, Background, Foreground). A GC begun before the session (its pause only partly seen) is counted in dotnet_gc_collections_total, not here.",
		Labels: target(LabelGeneration, LabelGCType)}
	famSuspend = &Family{Name: "clrspy_gc_suspend_seconds", OTel: "clrspy.gc.suspend", OTelUnit: "s", Kind: Histogram,
		Help:   "Time to suspend the runtime for each GC (SuspendEEBegin to SuspendEEEnd): how long threads took to reach a safe point.",
		Labels: target()}
	famSuspensions = &Family{Name: "clrspy_runtime_suspensions_total", OTel: "clrspy.runtime.suspensions", OTelUnit: "{suspension}", Kind: Counter,
		Help:   "Runtime suspensions that were not for a GC since clrspy attached, by the runtime's suspend reason (debugger, ReJIT, the sample profiler: clrspy's own CPU profiles too, ...).",
		Labels: target(LabelReason)}
	famSuspended = &Family{Name: "clrspy_runtime_suspended_seconds_total", OTel: "clrspy.runtime.suspended", OTelUnit: "s", Kind: Counter,
		Help:   "Time the runtime was stopped by suspensions that were not for a GC (SuspendEEBegin to RestartEEEnd) since clrspy attached, by suspend reason.",
		Labels: target(LabelReason)}
	famPromoted = &Family{Name: "clrspy_gc_promoted_bytes_total", OTel: "clrspy.gc.promoted", OTelUnit: "By", Kind: Counter,
		Help:   "Bytes GCs promoted out of each generation (for gen2, LOH and POH: bytes that survived in it) since clrspy attached (the runtime keeps no total).",
		Labels: target(LabelGeneration)}
	famContentions = &Family{Name: "dotnet_monitor_lock_contentions_total", OTel: "dotnet.monitor.lock_contentions", OTelUnit: "{contention}", Kind: Counter,
		Help:   "Times a thread found a Monitor lock held and waited for it (ContentionStart events; the runtime's Monitor.LockContentionCount): since the process started where the runtime said its count at the attach (as for dotnet_gc_collections_total), else since clrspy attached.",
		Labels: target()}
	famLockWait = &Family{Name: "clrspy_lock_wait_seconds", OTel: "clrspy.lock.wait", OTelUnit: "s", Kind: Histogram,
		Help:   "Lock waits, ContentionStart to ContentionStop (the spinning before a wait not included).",
		Labels: target()}
	famDeadlocks = &Family{Name: "clrspy_deadlocks", OTel: "clrspy.deadlocks", OTelUnit: "{deadlock}", Kind: Gauge,
		Help:   "Deadlocks now: cycles of lock waits, each open a second or longer, each waiter waiting for a lock the next one holds (owners from the contention events: only waits that began while clrspy watched). clrspy stacks --pid N names the threads.",
		Labels: target()}
	famBlocked = &Family{Name: "clrspy_blocked_threads", OTel: "clrspy.blocked_threads", OTelUnit: "{thread}", Kind: Gauge,
		Help:   "Threads waiting for a lock a second or longer now (kind lock: Monitor and System.Threading.Lock waits that began while clrspy watched).",
		Labels: target(Label{"kind", "clrspy.wait.kind"})}
	famExceptionSites = &Family{Name: "clrspy_exceptions_thrown_total", OTel: "clrspy.exceptions.thrown", OTelUnit: "{exception}", Kind: Counter,
		Help:   "Exceptions thrown since the session began (first chance, caught or not), by type and throw site (the first application frame of the throw's stack), with serve --exceptions: the 10 types thrown most, each with its 5 top sites and the rest as [other sites], the other types as [other types], so the series stay bounded. dotnet_exceptions_total is the runtime's own count by type.",
		Labels: target(Label{"error_type", "error.type"}, Label{"throw_site", "code.function"})}
	famFindings = &Family{Name: "clrspy_findings", OTel: "clrspy.findings", OTelUnit: "{finding}", Kind: Gauge,
		Help:   "clrspy triage's findings per area and severity, judged from the monitor's figures since clrspy attached (docs/TRIAGE.md's thresholds; the thread-pool and exception ones from the runtime's counters now): alert on severity=\"critical\" > 0.",
		Labels: target(Label{"area", "clrspy.finding.area"}, Label{"severity", "clrspy.finding.severity"})}
	famUp = &Family{Name: "clrspy_target_up", OTel: "clrspy.target.up", Kind: Gauge,
		Help:   "1 while clrspy has a session on the process, 0 once it ended (the process exited, or the session failed and is being retried); the series go after the grace period.",
		Labels: target()}
	famInfo = &Family{Name: "clrspy_target_info", OTel: "clrspy.target.info", Kind: Gauge,
		Help:   "Always 1: the process's runtime version and GC flavour (server or workstation, empty until known) as labels.",
		Labels: target(Label{"runtime_version", "dotnet.runtime.version"}, Label{"gc", "gc.kind"})}
	famLost = &Family{Name: "clrspy_events_lost_total", OTel: "clrspy.events.lost", OTelUnit: "{event}", Kind: Counter,
		Help:   "Events the runtime dropped from the session since clrspy attached (its buffer was full): the figures of this process miss what they carried.",
		Labels: target()}
	famAttachErrors = &Family{Name: "clrspy_attach_errors_total", OTel: "clrspy.attach.errors", OTelUnit: "{error}", Kind: Counter,
		Help:   "Sessions that could not be opened or failed, by reason: permission, disabled (diagnostics off in the process), no_socket, refused (a stale socket), gone (the process exited first), timeout (a runtime on the diagnostic port did not answer), session (the runtime refused the session, or it ended while the process ran on), pid_mismatch and cookie_mismatch (a connection to the diagnostic port whose claimed pid or cookie its peer credentials contradict: refused), peer_unknown (its credentials could not be read), other.",
		Labels: []Label{LabelReason}}
	famSessions = &Family{Name: "clrspy_sessions", OTel: "clrspy.sessions", OTelUnit: "{session}", Kind: Gauge,
		Help: "Sessions clrspy has open now (monitoring sessions; profiles pulled through /debug/pprof not counted)."}
	famLastEventAge = &Family{Name: "clrspy_target_last_event_age_seconds", OTel: "clrspy.target.last_event_age", OTelUnit: "s", Kind: Gauge,
		Help:   "Time since the latest event of the process's session. The runtime publishes its counters every --counter-interval, so a live process stays under that plus a few seconds; a stopped (SIGSTOP) or hung one grows while clrspy_target_up stays 1.",
		Labels: target()}
	famCaptureErrors = &Family{Name: "clrspy_capture_errors_total", OTel: "clrspy.capture.errors", OTelUnit: "{error}", Kind: Counter,
		Help:   "Pause-triggered captures that were not saved, by reason: no_space, read_only, permission, missing_dir, io (another write error), skipped (due while captures back off after a failure).",
		Labels: []Label{LabelReason}}
)

// ownFamilies is every family above, in exposition order.
var ownFamilies = []*Family{famCollections, famPauseTime, famPauseRuntime, famHeapSize, famPause, famSuspend, famSuspensions, famSuspended,
	famPromoted, famContentions, famLockWait, famDeadlocks, famBlocked, famExceptionSites, famFindings, famUp, famInfo, famLost, famAttachErrors, famSessions,
	famLastEventAge, famCaptureErrors}

// counterFamily is one runtime counter exported under its semantic-
// convention name: attrs are the counter's attributes, in label order.
type counterFamily struct {
	*Family
	semconv string
	attrs   []string
}

// runtimeCounters are the runtime's own counters (package counters: the
// System.Runtime EventCounters, or the System.Runtime meter on .NET 9+)
// that serve exports. dotnet.gc.collections, dotnet.gc.pause.time,
// dotnet.gc.last_collection.heap.size and dotnet.monitor.lock_contentions
// come from the events instead (the families above).
var runtimeCounters = []counterFamily{
	rc("dotnet.process.cpu.count", "{cpu}", Gauge, "Processors available to the process."),
	rc("dotnet.process.cpu.time", "s", Counter, "CPU time the process used since it started, by mode (user, system); .NET 9+ meter only.", "cpu.mode"),
	rc("dotnet.process.memory.working_set", "By", Gauge, "The process's working set (physical memory mapped)."),
	rc("dotnet.gc.heap.total_allocated", "By", Counter, "Bytes allocated on the managed heap: since the process started from the .NET 9+ meter, since clrspy attached from the EventCounters (earlier runtimes, younger processes)."),
	rc("dotnet.gc.last_collection.memory.committed_size", "By", Gauge, "Memory the GC had committed after the latest GC."),
	rc("dotnet.gc.last_collection.heap.fragmentation.size", "By", Gauge, "Free space inside each generation after the latest GC; .NET 9+ meter only.", "dotnet.gc.heap.generation"),
	rc("dotnet.jit.compiled_il.size", "By", Counter, "Bytes of IL the JIT compiled since the process started."),
	rc("dotnet.jit.compiled_methods", "{method}", Counter, "Methods the JIT compiled since the process started."),
	rc("dotnet.jit.compilation.time", "s", Counter, "Time the JIT spent compiling: since the process started from the .NET 9+ meter, since clrspy attached from the EventCounters (earlier runtimes, younger processes)."),
	rc("dotnet.thread_pool.thread.count", "{thread}", Gauge, "Thread pool threads that exist now."),
	rc("dotnet.thread_pool.work_item.count", "{work_item}", Counter, "Work items the thread pool completed: since the process started from the .NET 9+ meter, since clrspy attached from the EventCounters (earlier runtimes, younger processes)."),
	rc("dotnet.thread_pool.queue.length", "{work_item}", Gauge, "Work items queued to the thread pool, not yet started."),
	rc("dotnet.timer.count", "{timer}", Gauge, "Timers that are active now."),
	rc("dotnet.assembly.count", "{assembly}", Gauge, "Assemblies loaded now."),
	rc("dotnet.exceptions", "{exception}", Counter, "Exceptions thrown in managed code since clrspy attached (the runtime keeps no total), by type (_OTHER where the runtime does not say, as with EventCounters).", "error.type"),
}

func rc(semconv, unit string, kind Kind, help string, attrs ...string) counterFamily {
	f := &Family{OTel: semconv, OTelUnit: unit, Kind: kind, Help: help + " The runtime's own counter (" + semconv + ")."}
	f.Name = promName(semconv, unit, kind)
	labels := target()
	for _, a := range attrs {
		labels = append(labels, Label{promLabel(a), a})
	}
	f.Labels = labels
	return counterFamily{Family: f, semconv: semconv, attrs: attrs}
}

// promName spells an OpenTelemetry instrument name as the OpenTelemetry
// Prometheus exporter does: dots become underscores, the unit is suffixed
// (annotations in braces are dropped), counters end in _total.
func promName(name, unit string, kind Kind) string {
	n := promLabel(name)
	switch unit {
	case "s":
		n += "_seconds"
	case "By":
		n += "_bytes"
	}
	if kind == Counter {
		n += "_total"
	}
	return n
}

// promLabel turns an OpenTelemetry name into a Prometheus one: every
// character other than a letter, digit or underscore becomes '_'.
func promLabel(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	return string(b)
}

// allFamilies is every family, own first.
func allFamilies() []*Family {
	fs := append([]*Family(nil), ownFamilies...)
	for _, c := range runtimeCounters {
		fs = append(fs, c.Family)
	}
	return fs
}

func init() {
	for _, f := range allFamilies() {
		names := make([]string, len(f.Labels))
		for i, l := range f.Labels {
			names[i] = l.Prom
		}
		var opts []prometheus.DescOpt
		if u := f.promUnit(); u != "" {
			opts = append(opts, prometheus.WithUnit(u))
		}
		f.desc = prometheus.V2.NewDesc(f.Name, f.Help, prometheus.UnconstrainedLabels(names), nil, opts...)
	}
}
