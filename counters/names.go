package counters

// Attribute is one attribute (Prometheus label) of a metric.
type Attribute struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Generation attribute: the semantic conventions' key, and the key the
// .NET 9 and 10 runtimes actually write (renamed in Result).
const (
	AttrGeneration        = "dotnet.gc.heap.generation"
	runtimeAttrGeneration = "gc.heap.generation"
	AttrErrorType         = "error.type"
)

// Mapping maps one System.Runtime EventCounter to its semantic-convention
// metric, for runtimes without the System.Runtime meter (.NET 8 and
// earlier).
type Mapping struct {
	EventCounter string      // the counter's name: "exception-count"
	Name         string      // the semantic-convention name: "dotnet.exceptions"
	Attributes   []Attribute // fixed attributes of the mapped series
	Kind         Kind
	Unit         string  // UCUM unit of the mapped value
	Scale        float64 // mapped value = EventCounter value × Scale
	// FromStart: a Mean counter that polls a total since the process
	// started (methods-jitted-count). Sum counters give increments, so
	// their mapped totals run from the session's start.
	FromStart bool
}

func gen(g string) []Attribute { return []Attribute{{AttrGeneration, g}} }

// Mappings lists every System.Runtime EventCounter that has a
// semantic-convention equivalent. The gen-N-gc-count counters count
// cumulatively (a gen2 GC is also counted by gen0 and gen1); Result turns
// them into the convention's exclusive counts.
var Mappings = []Mapping{
	{"working-set", "dotnet.process.memory.working_set", nil, KindUpDownCounter, "By", 1e6, false},
	{"gen-0-gc-count", "dotnet.gc.collections", gen("gen0"), KindCounter, "{collection}", 1, false},
	{"gen-1-gc-count", "dotnet.gc.collections", gen("gen1"), KindCounter, "{collection}", 1, false},
	{"gen-2-gc-count", "dotnet.gc.collections", gen("gen2"), KindCounter, "{collection}", 1, false},
	{"alloc-rate", "dotnet.gc.heap.total_allocated", nil, KindCounter, "By", 1, false},
	{"gc-committed", "dotnet.gc.last_collection.memory.committed_size", nil, KindUpDownCounter, "By", 1e6, false},
	{"gen-0-size", "dotnet.gc.last_collection.heap.size", gen("gen0"), KindUpDownCounter, "By", 1, false},
	{"gen-1-size", "dotnet.gc.last_collection.heap.size", gen("gen1"), KindUpDownCounter, "By", 1, false},
	{"gen-2-size", "dotnet.gc.last_collection.heap.size", gen("gen2"), KindUpDownCounter, "By", 1, false},
	{"loh-size", "dotnet.gc.last_collection.heap.size", gen("loh"), KindUpDownCounter, "By", 1, false},
	{"poh-size", "dotnet.gc.last_collection.heap.size", gen("poh"), KindUpDownCounter, "By", 1, false},
	{"total-pause-time-by-gc", "dotnet.gc.pause.time", nil, KindCounter, "s", 1e-3, false},
	{"il-bytes-jitted", "dotnet.jit.compiled_il.size", nil, KindCounter, "By", 1, true},
	{"methods-jitted-count", "dotnet.jit.compiled_methods", nil, KindCounter, "{method}", 1, true},
	{"time-in-jit", "dotnet.jit.compilation.time", nil, KindCounter, "s", 1e-3, false},
	{"threadpool-thread-count", "dotnet.thread_pool.thread.count", nil, KindUpDownCounter, "{thread}", 1, false},
	{"threadpool-completed-items-count", "dotnet.thread_pool.work_item.count", nil, KindCounter, "{work_item}", 1, false},
	{"threadpool-queue-length", "dotnet.thread_pool.queue.length", nil, KindUpDownCounter, "{work_item}", 1, false},
	{"monitor-lock-contention-count", "dotnet.monitor.lock_contentions", nil, KindCounter, "{contention}", 1, false},
	{"active-timer-count", "dotnet.timer.count", nil, KindUpDownCounter, "{timer}", 1, false},
	{"assembly-count", "dotnet.assembly.count", nil, KindUpDownCounter, "{assembly}", 1, false},
	// The runtime does not say which exception: the convention's fallback.
	{"exception-count", "dotnet.exceptions", []Attribute{{AttrErrorType, "_OTHER"}}, KindCounter, "{exception}", 1, false},
}

var mappingByCounter = func() map[string]*Mapping {
	m := make(map[string]*Mapping, len(Mappings))
	for i := range Mappings {
		m[Mappings[i].EventCounter] = &Mappings[i]
	}
	return m
}()

// MappingOf returns the mapping of a System.Runtime EventCounter, or nil.
func MappingOf(eventCounter string) *Mapping { return mappingByCounter[eventCounter] }

// semconv describes a System.Runtime meter instrument as the semantic
// conventions define it. The runtime publishes some up-down counters as
// observable counters (dotnet.thread_pool.thread.count): the convention's
// kind wins.
type semconv struct {
	kind Kind
	// fromStart: the instrument's value counts from the process start
	// (observable counters); dotnet.exceptions is a plain Counter the
	// session aggregates from its own start.
	fromStart bool
}

var semconvs = map[string]semconv{
	"dotnet.process.cpu.count":                          {KindUpDownCounter, false},
	"dotnet.process.cpu.time":                           {KindCounter, true},
	"dotnet.process.memory.working_set":                 {KindUpDownCounter, false},
	"dotnet.gc.collections":                             {KindCounter, true},
	"dotnet.gc.heap.total_allocated":                    {KindCounter, true},
	"dotnet.gc.last_collection.memory.committed_size":   {KindUpDownCounter, false},
	"dotnet.gc.last_collection.heap.size":               {KindUpDownCounter, false},
	"dotnet.gc.last_collection.heap.fragmentation.size": {KindUpDownCounter, false},
	"dotnet.gc.pause.time":                              {KindCounter, true},
	"dotnet.jit.compiled_il.size":                       {KindCounter, true},
	"dotnet.jit.compiled_methods":                       {KindCounter, true},
	"dotnet.jit.compilation.time":                       {KindCounter, true},
	"dotnet.thread_pool.thread.count":                   {KindUpDownCounter, false},
	"dotnet.thread_pool.work_item.count":                {KindCounter, true},
	"dotnet.thread_pool.queue.length":                   {KindUpDownCounter, false},
	"dotnet.monitor.lock_contentions":                   {KindCounter, true},
	"dotnet.timer.count":                                {KindUpDownCounter, false},
	"dotnet.assembly.count":                             {KindUpDownCounter, false},
	"dotnet.exceptions":                                 {KindCounter, false},
}

// IsSemConv reports whether name is a .NET runtime semantic-convention
// metric.
func IsSemConv(name string) bool { _, ok := semconvs[name]; return ok }

// normUnit turns an EventCounter's DisplayUnits into a UCUM unit and the
// factor that converts its values.
func normUnit(u string) (string, float64) {
	switch u {
	case "MB":
		return "By", 1e6
	case "B":
		return "By", 1
	case "ms":
		return "s", 1e-3
	}
	return u, 1
}
